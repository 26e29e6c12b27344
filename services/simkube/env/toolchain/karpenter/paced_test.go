package main

import (
	"context"
	"testing"
	"time"

	"github.com/awslabs/operatorpkg/reconciler"
	"github.com/awslabs/operatorpkg/singleton"

	"simkube.local/toolchain/pacing"
)

type countingLoop struct {
	result reconciler.Result
	passes int
}

func (c *countingLoop) Reconcile(context.Context) (reconciler.Result, error) {
	c.passes++
	return c.result, nil
}
func (*countingLoop) Name() string { return "counting" }

// The loop's next pass comes once its delay has passed on the pace; until then a reconcile
// only looks again, at most recheck later.
func TestPacedLoopWaitsItsDelayOnThePace(t *testing.T) {
	inner := &countingLoop{result: reconciler.Result{RequeueAfter: time.Second}}
	p := &pacedLoop{inner: inner, pace: pacing.NewPace(10)} // 1 s of trace: 100 ms of wall
	ctx := context.Background()
	got, _ := p.Reconcile(ctx)
	if inner.passes != 1 || got.RequeueAfter != recheck {
		t.Fatalf("first pass: %d passes, requeue %v", inner.passes, got.RequeueAfter)
	}
	if _, _ = p.Reconcile(ctx); inner.passes != 1 {
		t.Fatal("a pass ran before its delay had passed")
	}
	time.Sleep(110 * time.Millisecond)
	if _, _ = p.Reconcile(ctx); inner.passes != 2 {
		t.Fatal("the pass did not run once its delay had passed")
	}
	held := &pacedLoop{inner: &countingLoop{result: reconciler.Result{RequeueAfter: time.Second}},
		pace: pacing.NewPace(10)}
	held.pace.SetHeld(true)
	_, _ = held.Reconcile(ctx)
	time.Sleep(110 * time.Millisecond) // 110 ms of trace while held: not yet 1 s
	if _, _ = held.Reconcile(ctx); held.inner.(*countingLoop).passes != 1 {
		t.Fatal("a held pace let the pass come at the speed's wall time")
	}
}

func TestPacedDelayDividesBySpeed(t *testing.T) {
	cases := map[time.Duration]time.Duration{
		10 * time.Second:             time.Second,
		singleton.RequeueImmediately: singleton.RequeueImmediately,
		0:                            0, // no requeue stays no requeue
	}
	for asked, want := range cases {
		if got := pacedDelay(asked, pacing.NewPace(10)); got != want {
			t.Errorf("requeue %v at speed 10 = %v; want %v", asked, got, want)
		}
	}
	if got := pacedDelay(10*time.Second, pacing.NewPace(1)); got != 10*time.Second {
		t.Errorf("pacedDelay at speed 1 = %v; want 10s", got)
	}
	held := pacing.NewPace(10)
	held.SetHeld(true)
	if got := pacedDelay(10*time.Second, held); got != time.Second {
		t.Errorf("pacedDelay during a hold = %v; want 1s (never late)", got)
	}
}

func TestPacedLeavesSpeedOneAlone(t *testing.T) {
	if got, err := paced(nil, pacing.NewPace(1), nil); got != nil || err != nil {
		t.Errorf("paced(nil, speed 1, nil) = %v, %v", got, err)
	}
}
