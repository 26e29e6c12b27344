package main

// Karpenter's disruption controller looks for consolidation every pollingPeriod (10 s) by
// asking controller-runtime to requeue it, not through the clock, so a scaled clock alone
// leaves that cadence on the wall. pacedLoop registers the same controller with the same
// single-request source as upstream's Register does (sigs.k8s.io/karpenter v1.13,
// pkg/controllers/disruption/controller.go), through a reconciler that divides each
// requeue delay it returns by the speed (pacing/pace.go).

import (
	"context"
	"sync"
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

	"simkube.local/toolchain/pacing"
)

// loop is what pacedLoop needs of the controller it wraps.
type loop interface {
	singleton.Reconciler
	Name() string
}

// recheck bounds the wall time between looks at a paced loop's next pass, so a hold that
// ends meanwhile (and with it the real-time rate) does not leave a long wait behind.
const recheck = 100 * time.Millisecond

type pacedLoop struct {
	inner loop
	pace  *pacing.Pace

	mu   sync.Mutex
	next time.Duration // the pace's trace time of the next pass; 0: now
}

// Reconcile runs one pass of the wrapped loop when its requeue delay has passed on the
// pace, and otherwise looks again shortly. The disruption loop's 10 s pollingPeriod then
// lasts 10 s of trace time whether or not the run is held meanwhile: divided at the rate of
// the moment it was returned, a poll returned during a hold waited 10 s of wall time, up to
// 100 s of trace at 10x once the hold ended.
func (p *pacedLoop) Reconcile(ctx context.Context) (reconciler.Result, error) {
	p.mu.Lock()
	left := p.next - p.pace.Elapsed()
	p.mu.Unlock()
	if left > 0 {
		return reconciler.Result{RequeueAfter: min(p.pace.WallFor(left), recheck)}, nil
	}
	result, err := p.inner.Reconcile(ctx)
	if result.RequeueAfter > 0 && p.pace.Speed != 1 {
		p.mu.Lock()
		p.next = p.pace.Elapsed() + result.RequeueAfter
		p.mu.Unlock()
		result.RequeueAfter = min(p.pace.WallFor(result.RequeueAfter), recheck)
	}
	return result, err
}

// pacedDelay turns a requeue delay in trace time into wall time at the run's speed,
// keeping a positive one positive: controller-runtime reads a zero RequeueAfter as "do not
// requeue", which would stop the loop for good. These requeues (the provisioner's triggers,
// the termination controller's re-checks) are per object and are not followed through a
// hold: one returned during a hold comes early in trace time, by at most its delay, rather
// than late by up to (speed − 1) times it.
func pacedDelay(delay time.Duration, p *pacing.Pace) time.Duration {
	if delay <= 0 || p.Speed == 1 {
		return delay
	}
	return max(time.Duration(float64(delay)/p.Speed), singleton.RequeueImmediately)
}

func (p *pacedLoop) Register(_ context.Context, m manager.Manager) error {
	return controllerruntime.NewControllerManagedBy(m).
		Named(p.inner.Name()).
		WatchesRawSource(singleton.Source()).
		Complete(singleton.AsReconciler(p))
}

// paced returns controllers with the disruption loop, its queue (queue.go), the
// provisioner's pod and node triggers (triggers.go) and the node termination controller
// (termination.go) wrapped at speed, and the provisioner's passes counted (passes.go);
// unchanged at 1. provider decides which nodes the termination controller finalizes.
func paced(controllers []controller.Controller, p *pacing.Pace,
	provider cloudprovider.CloudProvider) ([]controller.Controller, error) {
	if p.Speed == 1 {
		return controllers, nil
	}
	out := make([]controller.Controller, len(controllers))
	for i, c := range controllers {
		switch inner := c.(type) {
		case *disruption.Controller:
			out[i] = &pacedLoop{inner: inner, pace: p}
		case *disruption.Queue:
			queue, err := newPacedQueue(inner, p)
			if err != nil {
				return nil, err
			}
			out[i] = queue
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
	return out, nil
}
