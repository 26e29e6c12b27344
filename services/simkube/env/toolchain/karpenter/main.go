// Command karpenter runs Karpenter with its KWOK cloud provider, as the module's own kwok
// command does, but with its timers at the replay's speed (SIMKUBE_SPEED, default 1).
//
// simkube restarts Karpenter for every replay at speed s. Its settings (batching flags,
// NodePools' consolidateAfter) can be divided by s from outside, but its hard-coded waits
// cannot: the disruption controller's 15 s commandValidationDelay goes through the
// operator's Clock and its 10 s pollingPeriod through a controller requeue. Replacing the
// exported Operator.Clock before any controller is built, and pacing the requeues of the
// disruption loop, the provisioner's triggers and the node termination controller, puts
// them on the replay's time.
package main

import (
	"fmt"
	"os"

	"sigs.k8s.io/controller-runtime/pkg/log"
	kwok "sigs.k8s.io/karpenter/kwok/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/overlay"
	"sigs.k8s.io/karpenter/pkg/controllers"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/operator"
)

func main() {
	// Checked before the operator starts, so a bad value stops the process at once with
	// a message instead of a Karpenter that runs at the wrong speed.
	speed, err := parseSpeed(os.Getenv(SpeedVariable))
	if err != nil {
		fmt.Fprintf(os.Stderr, "karpenter: %v\n", err)
		os.Exit(2)
	}
	ctx, op := operator.NewOperator()
	op.Clock = newClock(speed) // before anything below copies it
	if speed != 1 {
		log.FromContext(ctx).Info("timers follow the replay's speed", "speed", speed)
	}

	types, err := kwok.ConstructInstanceTypes(ctx)
	if err != nil { // logged and carried on, as upstream's command does
		log.FromContext(ctx).Error(err, "failed constructing instance types")
	}
	// The provider without overlays is passed on too: some controllers need the raw offers.
	raw := kwok.NewCloudProvider(ctx, op.GetClient(), types)
	provider := overlay.Decorate(raw, op.GetClient(), op.InstanceTypeStore)
	// The cluster state keeps nominations on the trace clock, which the disruption
	// controller reads them with (traceclock.go).
	trace := newTraceClock(speed)
	cluster := state.NewCluster(trace, op.GetClient(), provider)
	all := controllers.NewControllers(ctx, op.Manager, op.Clock, op.GetClient(),
		op.EventRecorder, provider, raw, cluster, op.InstanceTypeStore)
	if speed != 1 {
		all, err = retimed(all, retimedDeps{kubeClient: op.GetClient(), recorder: op.EventRecorder,
			provider: provider, cluster: cluster, clock: op.Clock, traceClock: trace})
		if err != nil {
			fmt.Fprintf(os.Stderr, "karpenter: %v\n", err)
			os.Exit(2)
		}
	}
	op.WithControllers(ctx, paced(all, speed, provider)...).Start(ctx)
}
