package main

// Karpenter's node termination controller finishes a removal through controller-runtime
// requeues, not the clock (sigs.k8s.io/karpenter v1.13,
// pkg/controllers/node/termination/controller.go): it looks again every 1 s while a drained
// node's MinDrainTime (5 s, already on the trace clock: retimed.go) has not passed, and every
// 5 s while the instance is terminating. Left on the wall, at 10x each removal took about
// 10 s of trace where the recorded cluster took 5 s, and the next consolidation step waited
// for it. pacedTermination registers the controller as upstream does (managed nodes only,
// the same rate limiters and reconcile counts) through a reconciler that divides the
// requeue delay it returns by the speed.

import (
	"context"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	controllerruntime "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	utilscontroller "sigs.k8s.io/karpenter/pkg/utils/controller"
	nodeutils "sigs.k8s.io/karpenter/pkg/utils/node"

	"simkube.local/toolchain/pacing"
)

// Upstream's settings for the termination controller's queue.
const (
	minTerminationReconciles = 100
	maxTerminationReconciles = 5000
	terminationMinQPS        = 10
	terminationBaseDelay     = 100 * time.Millisecond // failures back off from here ...
	terminationMaxDelay      = 10 * time.Second       // ... to here
)

// nodeFinalizer is what pacedTermination needs of the termination controller.
type nodeFinalizer interface {
	Reconcile(ctx context.Context, node *corev1.Node) (reconcile.Result, error)
	Name() string
}

type pacedTermination struct {
	inner    nodeFinalizer
	provider cloudprovider.CloudProvider // which nodes are Karpenter's to finalize
	pace     *pacing.Pace
}

// Reconcile runs one pass of the termination controller and shortens its wait to the next.
func (p *pacedTermination) Reconcile(ctx context.Context, node *corev1.Node) (reconcile.Result, error) {
	result, err := p.inner.Reconcile(ctx, node)
	result.RequeueAfter = pacedDelay(result.RequeueAfter, p.pace)
	return result, err
}

func (p *pacedTermination) Register(ctx context.Context, m manager.Manager) error {
	workers := utilscontroller.LinearScaleReconciles(utilscontroller.CPUCount(ctx),
		minTerminationReconciles, maxTerminationReconciles)
	qps, bucket := utilscontroller.GetTypedBucketConfigs(terminationMinQPS,
		minTerminationReconciles, workers)
	limiter := workqueue.NewTypedMaxOfRateLimiter[reconcile.Request](
		workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](
			terminationBaseDelay, terminationMaxDelay),
		&workqueue.TypedBucketRateLimiter[reconcile.Request]{
			Limiter: rate.NewLimiter(rate.Limit(qps), bucket)})
	return controllerruntime.NewControllerManagedBy(m).
		Named(p.inner.Name()).
		For(&corev1.Node{}, builder.WithPredicates(nodeutils.IsManagedPredicateFuncs(p.provider))).
		WithOptions(crcontroller.Options{RateLimiter: limiter, MaxConcurrentReconciles: workers}).
		Complete(reconcile.AsReconciler[*corev1.Node](m.GetClient(), p))
}
