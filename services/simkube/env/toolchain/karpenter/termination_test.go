package main

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"simkube.local/toolchain/pacing"
)

// fakeFinalizer answers like the termination controller waiting out MinDrainTime.
type fakeFinalizer struct {
	seen   int
	result reconcile.Result
}

func (f *fakeFinalizer) Reconcile(_ context.Context, _ *corev1.Node) (reconcile.Result, error) {
	f.seen++
	return f.result, nil
}

func (f *fakeFinalizer) Name() string { return "node.termination" }

func TestPacedTerminationDividesTheDrainRecheck(t *testing.T) {
	inner := &fakeFinalizer{result: reconcile.Result{RequeueAfter: time.Second}}
	paced := &pacedTermination{inner: inner, pace: pacing.NewPace(10)}
	result, err := paced.Reconcile(context.Background(), &corev1.Node{})
	if err != nil || inner.seen != 1 {
		t.Fatalf("the inner controller must run once without error: seen %d, %v", inner.seen, err)
	}
	if result.RequeueAfter != 100*time.Millisecond {
		t.Fatalf("1 s at speed 10 must requeue after 100ms, got %v", result.RequeueAfter)
	}
}

func TestPacedTerminationKeepsAFinishedRemovalFinished(t *testing.T) {
	inner := &fakeFinalizer{result: reconcile.Result{}}
	paced := &pacedTermination{inner: inner, pace: pacing.NewPace(10)}
	result, _ := paced.Reconcile(context.Background(), &corev1.Node{})
	if result.RequeueAfter != 0 {
		t.Fatalf("no requeue must stay no requeue, got %v", result.RequeueAfter)
	}
}
