package pacing

import (
	"testing"
	"time"
)

// A wait in progress when a hold begins slows to real time for the hold's length: 1 s of
// trace at 10x is 100 ms of wall; 50 ms of it at speed, then a 100 ms hold (100 ms of
// trace), then the remaining 400 ms of trace at speed: 40 ms. About 190 ms in all.
func TestSleepFollowsAHold(t *testing.T) {
	p := NewPace(10)
	done := make(chan time.Duration)
	start := time.Now()
	go func() {
		p.Sleep(time.Second, nil)
		done <- time.Since(start)
	}()
	time.Sleep(50 * time.Millisecond)
	p.SetHeld(true)
	time.Sleep(100 * time.Millisecond)
	p.SetHeld(false)
	took := <-done
	if took < 180*time.Millisecond || took > 1500*time.Millisecond {
		t.Fatalf("1 s of trace at 10x with a 100 ms hold took %v; want about 190 ms", took)
	}
}

func TestSleepDuringAHoldIsRealTime(t *testing.T) {
	p := NewPace(50)
	p.SetHeld(true)
	start := time.Now()
	p.Sleep(100*time.Millisecond, nil)
	if took := time.Since(start); took < 95*time.Millisecond || took > 2*time.Second {
		t.Fatalf("100 ms of trace while held took %v of wall; want 100 ms", took)
	}
}

func TestSleepStops(t *testing.T) {
	stop := make(chan struct{})
	close(stop)
	if NewPace(10).Sleep(time.Hour, stop) {
		t.Fatal("a stopped sleep reported it slept")
	}
}

func TestElapsedAndWallFor(t *testing.T) {
	p := NewPace(10)
	if got := p.WallFor(15 * time.Second); got != 1500*time.Millisecond {
		t.Errorf("WallFor(15s) at 10x = %v; want 1.5s", got)
	}
	if got := p.WallFor(1); got != 1 {
		t.Errorf("a positive wait became %v", got)
	}
	if got := p.WallFor(-time.Second); got != -time.Second {
		t.Errorf("WallFor(-1s) = %v", got)
	}
	p.SetHeld(true)
	p.SetHeld(true) // no change, no second checkpoint
	if got := p.WallFor(time.Second); got != time.Second {
		t.Errorf("WallFor(1s) held = %v; want 1s", got)
	}
	if e := p.Elapsed(); e < 0 || e > time.Second {
		t.Errorf("elapsed just after start = %v", e)
	}
}
