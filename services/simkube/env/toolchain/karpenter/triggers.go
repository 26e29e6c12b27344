package main

// Karpenter's provisioner is triggered by a pod (or a disrupted node) when it is first seen
// and again every 10 s while it stays provisionable, through a controller-runtime requeue
// (sigs.k8s.io/karpenter v1.13, pkg/controllers/provisioning/controller.go) rather than the
// clock. Each re-trigger opens a batch window, so at speed s a replay's batches would come
// every 10 s of wall time (100 s of trace at 10x) instead of every 10 s of trace time, and
// which pods share a batch would depend on the speed. pacedTrigger registers the same
// controller the same way upstream does, through a reconciler that divides the requeue delay
// it returns by the speed.

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	controllerruntime "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	utilscontroller "sigs.k8s.io/karpenter/pkg/utils/controller"

	"simkube.local/toolchain/pacing"
)

// Upstream's bounds on the triggers' concurrent reconciles (scaled by CPU count there too).
const (
	minTriggerReconciles = 10
	maxTriggerReconciles = 1000
)

// trigger is what pacedTrigger needs of the provisioner's pod or node trigger.
type trigger[T client.Object] interface {
	Reconcile(ctx context.Context, object T) (reconcile.Result, error)
	Name() string
}

type pacedTrigger[T client.Object] struct {
	inner trigger[T]
	pace  *pacing.Pace
	kind  func() T // a new empty object of the watched kind
}

// Reconcile triggers the provisioner as upstream does and shortens the wait before the next.
func (p *pacedTrigger[T]) Reconcile(ctx context.Context, object T) (reconcile.Result, error) {
	result, err := p.inner.Reconcile(ctx, object)
	result.RequeueAfter = pacedDelay(result.RequeueAfter, p.pace)
	return result, err
}

func (p *pacedTrigger[T]) Register(ctx context.Context, m manager.Manager) error {
	workers := utilscontroller.LinearScaleReconciles(utilscontroller.CPUCount(ctx),
		minTriggerReconciles, maxTriggerReconciles)
	return controllerruntime.NewControllerManagedBy(m).
		Named(p.inner.Name()).
		For(p.kind()).
		WithOptions(crcontroller.Options{MaxConcurrentReconciles: workers}).
		Complete(reconcile.AsReconciler[T](m.GetClient(), p))
}

func newPod() *corev1.Pod   { return &corev1.Pod{} }
func newNode() *corev1.Node { return &corev1.Node{} }
