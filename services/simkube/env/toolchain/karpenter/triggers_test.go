package main

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"simkube.local/toolchain/pacing"
)

// fakeTrigger answers like the provisioner's pod trigger: requeue after 10 s.
type fakeTrigger struct{ seen int }

func (f *fakeTrigger) Reconcile(_ context.Context, _ *corev1.Pod) (reconcile.Result, error) {
	f.seen++
	return reconcile.Result{RequeueAfter: 10 * time.Second}, nil
}

func (f *fakeTrigger) Name() string { return "provisioner.trigger.pod" }

func TestPacedTriggerDividesTheRetrigger(t *testing.T) {
	inner := &fakeTrigger{}
	paced := &pacedTrigger[*corev1.Pod]{inner: inner, pace: pacing.NewPace(20), kind: newPod}
	result, err := paced.Reconcile(context.Background(), &corev1.Pod{})
	if err != nil || inner.seen != 1 {
		t.Fatalf("the inner trigger must run once without error: seen %d, %v", inner.seen, err)
	}
	if result.RequeueAfter != 500*time.Millisecond {
		t.Fatalf("10 s at speed 20 must requeue after 500ms, got %v", result.RequeueAfter)
	}
}
