package main

// Karpenter's disruption controller looks for consolidation every pollingPeriod (10 s) by
// asking controller-runtime to requeue it, not through the clock, so a scaled clock alone
// leaves that cadence on the wall. pacedLoop registers the same controller with the same
// single-request source as upstream's Register does (sigs.k8s.io/karpenter v1.13,
// pkg/controllers/disruption/controller.go), through a reconciler that divides each
// requeue delay it returns by the speed (pace.go).

import (
	"context"
	"time"

	"github.com/awslabs/operatorpkg/controller"
	"github.com/awslabs/operatorpkg/reconciler"
	"github.com/awslabs/operatorpkg/singleton"
	corev1 "k8s.io/api/core/v1"
	controllerruntime "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/controllers/disruption"
	"sigs.k8s.io/karpenter/pkg/controllers/node/termination"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning"
)

// loop is what pacedLoop needs of the controller it wraps.
type loop interface {
	singleton.Reconciler
	Name() string
}

type pacedLoop struct {
	inner loop
	pace  *pace
}

// Reconcile runs one pass of the wrapped loop and shortens the wait before the next one.
func (p *pacedLoop) Reconcile(ctx context.Context) (reconciler.Result, error) {
	result, err := p.inner.Reconcile(ctx)
	result.RequeueAfter = pacedDelay(result.RequeueAfter, p.pace)
	return result, err
}

// pacedDelay turns a requeue delay in trace time into wall time at the pace's current rate
// (a hold that begins or ends meanwhile is not followed: requeues are re-checks, the next
// one is paced again), keeping a positive one positive: controller-runtime reads a zero
// RequeueAfter as "do not requeue", which would stop the loop for good.
func pacedDelay(delay time.Duration, p *pace) time.Duration {
	if delay <= 0 || p.speed == 1 {
		return delay
	}
	return max(p.wallFor(delay), singleton.RequeueImmediately)
}

func (p *pacedLoop) Register(_ context.Context, m manager.Manager) error {
	return controllerruntime.NewControllerManagedBy(m).
		Named(p.inner.Name()).
		WatchesRawSource(singleton.Source()).
		Complete(singleton.AsReconciler(p))
}

// paced returns controllers with the disruption loop, the provisioner's pod and node
// triggers (triggers.go) and the node termination controller (termination.go) wrapped at
// speed, and the provisioner's passes counted (passes.go); unchanged at 1. provider decides which nodes the termination controller finalizes.
func paced(controllers []controller.Controller, p *pace,
	provider cloudprovider.CloudProvider) []controller.Controller {
	if p.speed == 1 {
		return controllers
	}
	out := make([]controller.Controller, len(controllers))
	for i, c := range controllers {
		switch inner := c.(type) {
		case *disruption.Controller:
			out[i] = &pacedLoop{inner: inner, pace: p}
		case *provisioning.Provisioner:
			out[i] = &countedPasses{inner: inner} // its waits are on the clock already
		case *provisioning.PodController:
			out[i] = &pacedTrigger[*corev1.Pod]{inner: inner, pace: p, kind: newPod}
		case *provisioning.NodeController:
			out[i] = &pacedTrigger[*corev1.Node]{inner: inner, pace: p, kind: newNode}
		case *termination.Controller:
			out[i] = &pacedTermination{inner: inner, provider: provider, pace: p}
		default:
			out[i] = c
		}
	}
	return out
}
