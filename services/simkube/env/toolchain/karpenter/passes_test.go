package main

import (
	"context"
	"testing"

	"github.com/awslabs/operatorpkg/reconciler"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestPassesAreCountedStartedAndFinished(t *testing.T) {
	started := testutil.ToFloat64(provisionerPasses.WithLabelValues(passStarted))
	finished := testutil.ToFloat64(provisionerPasses.WithLabelValues(passFinished))
	var during float64
	c := &countedPasses{inner: probeLoop{during: func() {
		during = testutil.ToFloat64(provisionerPasses.WithLabelValues(passFinished))
	}}}
	if _, err := c.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(provisionerPasses.WithLabelValues(passStarted)); got != started+1 {
		t.Errorf("started = %v; want %v", got, started+1)
	}
	if during != finished {
		t.Errorf("a pass counted finished while it ran (%v, before %v)", during, finished)
	}
	if got := testutil.ToFloat64(provisionerPasses.WithLabelValues(passFinished)); got != finished+1 {
		t.Errorf("finished = %v; want %v", got, finished+1)
	}
}

type probeLoop struct{ during func() }

func (p probeLoop) Reconcile(context.Context) (reconciler.Result, error) {
	p.during()
	return reconciler.Result{}, nil
}
func (probeLoop) Name() string { return "probe" }
