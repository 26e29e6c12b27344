package main

import (
	"context"
	"testing"
	"time"

	"github.com/awslabs/operatorpkg/reconciler"
	"github.com/awslabs/operatorpkg/singleton"
	"k8s.io/utils/clock"
)

func TestParseSpeed(t *testing.T) {
	good := map[string]float64{"": 1, " ": 1, "1": 1, "10": 10, "2.5": 2.5, "1e6": 1e6}
	for text, want := range good {
		got, err := parseSpeed(text)
		if err != nil || got != want {
			t.Errorf("parseSpeed(%q) = %v, %v; want %v", text, got, err, want)
		}
	}
	for _, text := range []string{"fast", "0", "-2", "NaN", "Inf", "+Inf", "2e6", "10x"} {
		if _, err := parseSpeed(text); err == nil {
			t.Errorf("parseSpeed(%q) accepted a bad speed", text)
		}
	}
}

func TestSpeedOneIsTheRealClock(t *testing.T) {
	if c := newClock(newPace(1)); c != (clock.RealClock{}) {
		t.Fatalf("newClock at speed 1 = %T; want clock.RealClock", c)
	}
}

func TestNowStaysReal(t *testing.T) {
	c := pacedClock{pace: newPace(1000)}
	before := time.Now()
	now := c.Now()
	if now.Before(before) || now.Sub(before) > time.Second {
		t.Fatalf("Now() = %v, real time %v", now, before)
	}
	if since := c.Since(before.Add(-time.Minute)); since < time.Minute {
		t.Fatalf("Since a minute ago = %v; want at least a real minute", since)
	}
}

// elapsed runs wait and returns how long it took on the wall.
func elapsed(wait func()) time.Duration {
	start := time.Now()
	wait()
	return time.Since(start)
}

func TestWaitsAreDivided(t *testing.T) {
	c := pacedClock{pace: newPace(100)}
	const asked = 10 * time.Second // 100 ms of wall at speed 100
	waits := map[string]func(){
		"After":    func() { <-c.After(asked) },
		"Sleep":    func() { c.Sleep(asked) },
		"NewTimer": func() { <-c.NewTimer(asked).C() },
		"Tick":     func() { <-c.Tick(asked) },
		"NewTicker": func() {
			ticker := c.NewTicker(asked)
			defer ticker.Stop()
			<-ticker.C()
		},
		"AfterFunc": func() {
			done := make(chan struct{})
			c.AfterFunc(asked, func() { close(done) })
			<-done
		},
		"Reset": func() {
			timer := c.NewTimer(time.Hour)
			timer.Stop()
			timer.Reset(asked)
			<-timer.C()
		},
	}
	for name, wait := range waits {
		took := elapsed(wait)
		// Generous above (a shared machine), strict below: it must not fire early.
		if took < 90*time.Millisecond || took > 3*time.Second {
			t.Errorf("%s(%v) at speed 100 took %v; want about 100ms", name, asked, took)
		}
	}
}

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
	p := &pacedLoop{inner: inner, pace: newPace(10)} // 1 s of trace: 100 ms of wall
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
		pace: newPace(10)}
	held.pace.setHeld(true)
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
		if got := pacedDelay(asked, newPace(10)); got != want {
			t.Errorf("requeue %v at speed 10 = %v; want %v", asked, got, want)
		}
	}
	if got := pacedDelay(10*time.Second, newPace(1)); got != 10*time.Second {
		t.Errorf("pacedDelay at speed 1 = %v; want 10s", got)
	}
	held := newPace(10)
	held.setHeld(true)
	if got := pacedDelay(10*time.Second, held); got != time.Second {
		t.Errorf("pacedDelay during a hold = %v; want 1s (never late)", got)
	}
}

func TestPacedLeavesSpeedOneAlone(t *testing.T) {
	if got, err := paced(nil, newPace(1), nil); got != nil || err != nil {
		t.Errorf("paced(nil, speed 1, nil) = %v, %v", got, err)
	}
}

// The batcher's idiom: a timer stopped after it fired still has its value to drain.
func TestStopAfterFiringLeavesTheValue(t *testing.T) {
	timer := pacedClock{pace: newPace(1000)}.NewTimer(time.Second) // 1 ms of wall
	time.Sleep(50 * time.Millisecond)
	if timer.Stop() {
		t.Fatal("Stop after the timer fired reported it active")
	}
	select {
	case <-timer.C():
	case <-time.After(time.Second):
		t.Fatal("the fired value was lost")
	}
	if timer.Reset(time.Hour) {
		t.Error("Reset of a fired timer reported it active")
	}
	if !timer.Stop() {
		t.Error("Stop of the re-armed timer reported it inactive")
	}
}

func TestAStoppedTimerNeverDelivers(t *testing.T) {
	c := pacedClock{pace: newPace(100)}
	timer := c.NewTimer(time.Second) // 10 ms of wall
	if !timer.Stop() {
		t.Fatal("Stop of an armed timer reported it inactive")
	}
	fired := make(chan struct{})
	c.AfterFunc(time.Second, func() { close(fired) }).Stop()
	select {
	case <-timer.C():
		t.Fatal("a stopped timer delivered")
	case <-fired:
		t.Fatal("a stopped AfterFunc ran")
	case <-time.After(60 * time.Millisecond):
	}
}
