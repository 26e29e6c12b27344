// Command karpenter runs Karpenter with its KWOK cloud provider, as the module's own kwok
// command does, but with its timers at the replay's speed (SIMKUBE_SPEED, default 1).
//
// simkube restarts Karpenter for every replay at speed s. Its settings (batching flags,
// NodePools' consolidateAfter) can be divided by s from outside, but its hard-coded waits
// cannot: the disruption controller's 15 s commandValidationDelay goes through the
// operator's Clock and its 10 s pollingPeriod through a controller requeue. Replacing the
// exported Operator.Clock before any controller is built, and pacing the requeues of the
// disruption loop, the provisioner's triggers and the node termination controller, puts
// them on the replay's time. When the run holds its clock for the autoscaler, simkube names
// the run's ConfigMap (SIMKUBE_RUN_CONFIGMAP) and all of that, node registration included,
// follows the holds published there (pacing/pace.go).
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

	"simkube.local/toolchain/pacing"
)

func fail(err error) {
	fmt.Fprintf(os.Stderr, "karpenter: %v\n", err)
	os.Exit(2)
}

func main() {
	// Checked before the operator starts, so a bad value stops the process at once with
	// a message instead of a Karpenter that runs at the wrong speed.
	p, namespace, name, err := pacing.FromEnvironment(os.Getenv)
	if err != nil {
		fail(err)
	}
	speed := p.Speed
	ctx, op := operator.NewOperator()
	op.Clock = pacing.NewClock(p) // before anything below copies it
	if speed != 1 {
		log.FromContext(ctx).Info("timers follow the replay's speed", "speed", speed,
			"holds", namespace+"/"+name)
		if name != "" {
			if err := pacing.FollowHolds(ctx, op.KubernetesInterface, namespace, name, p); err != nil {
				fail(err)
			}
		}
	}

	types, err := kwok.ConstructInstanceTypes(ctx)
	if err != nil { // logged and carried on, as upstream's command does
		log.FromContext(ctx).Error(err, "failed constructing instance types")
	}
	raw := kwokProvider(ctx, op, p, types)
	// The provider without overlays is passed on too: some controllers need the raw offers.
	provider := overlay.Decorate(raw, op.GetClient(), op.InstanceTypeStore)
	// The cluster state keeps nominations on the trace clock, which the disruption
	// controller reads them with (pacing/traceclock.go).
	trace := pacing.NewTraceClock(p)
	cluster := state.NewCluster(trace, op.GetClient(), provider)
	all := controllers.NewControllers(ctx, op.Manager, op.Clock, op.GetClient(),
		op.EventRecorder, provider, raw, cluster, op.InstanceTypeStore)
	if speed != 1 {
		all, err = retimed(all, retimedDeps{kubeClient: op.GetClient(), recorder: op.EventRecorder,
			provider: provider, cluster: cluster, clock: op.Clock, traceClock: trace})
		if err != nil {
			fail(err)
		}
	}
	all, err = paced(all, p, provider)
	if err != nil {
		fail(err)
	}
	op.WithControllers(ctx, all...).Start(ctx)
}
