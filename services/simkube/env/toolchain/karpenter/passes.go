package main

// Counting the provisioner's passes, so simkube can hold a replay's clock until Karpenter
// has looked at a pod it just made pending, as it does for Cluster Autoscaler's loops
// (ctrl/autoscaler_loops.py). A pass is one Reconcile of the provisioner: wait for a pod's
// trigger (up to 1 s), batch the triggers (batch-idle-duration, at most
// batch-max-duration), simulate scheduling every pending pod, create the NodeClaims. A pass
// that starts after a pod turned pending sees it; so does one waiting for a trigger or in
// its batch window when the pod comes, but not always one already scheduling, so simkube
// waits for the pass after the one in progress: the same rule as for CA's loops.
//
// Karpenter's own metrics count scheduling simulations, not passes, and none counts passes
// started, hence this counter (on Karpenter's /metrics, from controller-runtime's registry).

import (
	"context"

	"github.com/awslabs/operatorpkg/reconciler"
	"github.com/awslabs/operatorpkg/singleton"
	"github.com/prometheus/client_golang/prometheus"
	controllerruntime "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Phase label values; the Python side reads them (ctrl/autoscaler_loops.py PassPhase).
const (
	passStarted  = "started"
	passFinished = "finished"
)

var provisionerPasses = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "simkube_karpenter_provisioner_passes_total",
	Help: "Passes of Karpenter's provisioner (batch, schedule, create NodeClaims), by phase.",
}, []string{"phase"})

func init() {
	crmetrics.Registry.MustRegister(provisionerPasses)
	// Both series exist from the start, so a reader tells "none yet" from "not counted".
	provisionerPasses.WithLabelValues(passStarted)
	provisionerPasses.WithLabelValues(passFinished)
}

type countedPasses struct {
	inner loop
}

func (c *countedPasses) Reconcile(ctx context.Context) (reconciler.Result, error) {
	provisionerPasses.WithLabelValues(passStarted).Inc()
	defer provisionerPasses.WithLabelValues(passFinished).Inc()
	return c.inner.Reconcile(ctx)
}

func (c *countedPasses) Register(_ context.Context, m manager.Manager) error {
	return controllerruntime.NewControllerManagedBy(m).
		Named(c.inner.Name()).
		WatchesRawSource(singleton.Source()).
		Complete(singleton.AsReconciler(c))
}
