package main

// Karpenter's disruption queue carries out a consolidation command: it launches the
// replacements, then looks again every 1 s (queueBaseDelay, a controller-runtime requeue,
// sigs.k8s.io/karpenter v1.13 pkg/controllers/disruption/queue.go) until they are
// initialized, and only then taints and drains the old nodes. On the wall that second was
// 10-20 s of trace at 10x-20x: in the Karpenter fidelity run on 7d98848, replacement
// initialized -> old node drained took 1.0 s in the truth and 4.7-18.9 s of trace in the
// replays. pacedQueue registers the queue as upstream does (the same channel of commands,
// rate limiters and reconcile counts) through a reconciler that divides the requeue delay
// it returns by the speed.
//
// The channel the disruption controller sends commands on is an unexported field of the
// Queue, and upstream's Register is the only reader; it is read here by reflection, and
// queueSource fails (the build's tests say so) if a Karpenter upgrade renames or retypes it.

import (
	"context"
	"fmt"
	"reflect"
	"time"
	"unsafe"

	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
	controllerruntime "sigs.k8s.io/controller-runtime"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
	v1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/controllers/disruption"
	utilscontroller "sigs.k8s.io/karpenter/pkg/utils/controller"

	"simkube.local/toolchain/pacing"
)

// Upstream's settings for the disruption queue's controller.
const (
	queueBaseDelay     = 1 * time.Second  // failures back off from here ...
	queueMaxDelay      = 10 * time.Second // ... to here
	queueQPS           = 100
	queueBucket        = 1000
	minQueueReconciles = 100
	maxQueueReconciles = 1000
)

type commands = chan event.TypedGenericEvent[*v1.NodeClaim]

// queueSource is the channel the disruption controller sends the queue's commands on.
func queueSource(q *disruption.Queue) (commands, error) {
	field := reflect.ValueOf(q).Elem().FieldByName("source")
	if !field.IsValid() {
		return nil, fmt.Errorf("karpenter's disruption.Queue has no field 'source'")
	}
	value := reflect.NewAt(field.Type(), unsafe.Pointer(field.UnsafeAddr())).Elem().Interface()
	channel, ok := value.(commands)
	if !ok {
		return nil, fmt.Errorf("karpenter's disruption.Queue.source is a %s, not a %T",
			field.Type(), channel)
	}
	return channel, nil
}

// commandRunner is what pacedQueue needs of the disruption queue.
type commandRunner interface {
	Reconcile(ctx context.Context, claim *v1.NodeClaim) (reconcile.Result, error)
	Name() string
}

type pacedQueue struct {
	inner  commandRunner
	source commands
	pace   *pacing.Pace
}

func newPacedQueue(q *disruption.Queue, p *pacing.Pace) (*pacedQueue, error) {
	channel, err := queueSource(q)
	if err != nil {
		return nil, err
	}
	return &pacedQueue{inner: q, source: channel, pace: p}, nil
}

// Reconcile runs one pass over a command and shortens its wait to the next.
func (p *pacedQueue) Reconcile(ctx context.Context, claim *v1.NodeClaim) (reconcile.Result, error) {
	result, err := p.inner.Reconcile(ctx, claim)
	result.RequeueAfter = pacedDelay(result.RequeueAfter, p.pace)
	return result, err
}

func (p *pacedQueue) Register(ctx context.Context, m manager.Manager) error {
	limiter := workqueue.NewTypedMaxOfRateLimiter[reconcile.Request](
		workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](
			queueBaseDelay, queueMaxDelay),
		&workqueue.TypedBucketRateLimiter[reconcile.Request]{
			Limiter: rate.NewLimiter(rate.Limit(queueQPS), queueBucket)})
	workers := utilscontroller.LinearScaleReconciles(utilscontroller.CPUCount(ctx),
		minQueueReconciles, maxQueueReconciles)
	return controllerruntime.NewControllerManagedBy(m).
		Named(p.inner.Name()).
		WatchesRawSource(source.Channel(p.source, &handler.TypedEnqueueRequestForObject[*v1.NodeClaim]{})).
		WithOptions(crcontroller.Options{RateLimiter: limiter, MaxConcurrentReconciles: workers}).
		Complete(reconcile.AsReconciler[*v1.NodeClaim](m.GetClient(), p))
}
