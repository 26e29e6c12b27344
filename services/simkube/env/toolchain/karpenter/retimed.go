package main

// Rebuilding the controllers that get traceClock (pacing/traceclock.go). controllers.NewControllers
// builds them all with one clock; the disruption controller and the node termination
// controller are built again here, through their public constructors and from the
// provisioner, queues and cluster state that list already holds, so that they share those
// objects with the rest of Karpenter and differ only in their clock.

import (
	"fmt"

	"github.com/awslabs/operatorpkg/controller"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/controllers/disruption"
	"sigs.k8s.io/karpenter/pkg/controllers/node/termination"
	"sigs.k8s.io/karpenter/pkg/controllers/node/termination/terminator"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
)

// retimedDeps is what the two constructors need besides their clock.
type retimedDeps struct {
	kubeClient client.Client
	recorder   events.Recorder
	provider   cloudprovider.CloudProvider
	cluster    *state.Cluster
	clock      clock.Clock // the operator's (real Now), for the terminator's pod checks
	traceClock clock.Clock // shared with the cluster state
}

// retimed returns controllers with the disruption and node termination controllers rebuilt
// on deps.traceClock. It fails if the list lacks what they are built from, which would mean
// an upstream change this wrapper must follow.
func retimed(controllers []controller.Controller, deps retimedDeps) ([]controller.Controller, error) {
	var (
		provisioner     *provisioning.Provisioner
		disruptionQueue *disruption.Queue
		evictionQueue   *terminator.Queue
	)
	for _, c := range controllers {
		switch found := c.(type) {
		case *provisioning.Provisioner:
			provisioner = found
		case *disruption.Queue:
			disruptionQueue = found
		case *terminator.Queue:
			evictionQueue = found
		}
	}
	if provisioner == nil || disruptionQueue == nil || evictionQueue == nil {
		return nil, fmt.Errorf("karpenter's controllers lack the provisioner or a queue")
	}
	out := make([]controller.Controller, len(controllers))
	replaced := 0
	for i, c := range controllers {
		switch c.(type) {
		case *disruption.Controller:
			out[i] = disruption.NewController(deps.traceClock, deps.kubeClient, provisioner,
				deps.provider, deps.recorder, deps.cluster, disruptionQueue)
			replaced++
		case *termination.Controller:
			drain := terminator.NewTerminator(deps.clock, deps.kubeClient, evictionQueue, deps.recorder)
			out[i] = termination.NewController(deps.traceClock, deps.kubeClient, deps.provider,
				drain, deps.recorder)
			replaced++
		default:
			out[i] = c
		}
	}
	if replaced != 2 {
		return nil, fmt.Errorf("found %d of karpenter's disruption and termination controllers, not 2", replaced)
	}
	return out, nil
}
