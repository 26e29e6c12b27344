package pacing

import (
	"testing"
	"time"

	"k8s.io/utils/clock"
)

func TestTraceClockAtSpeedOneIsReal(t *testing.T) {
	if c := NewTraceClock(NewPace(1)); c != (clock.RealClock{}) {
		t.Fatal("speed 1 must give the real clock")
	}
}

// Now advances speed seconds per wall second from the real start, so a nomination window
// of 10 s taken and checked on this clock lasts 10 s / speed of wall time.
func TestTraceClockNowRunsAtSpeed(t *testing.T) {
	c := NewTraceClock(NewPace(100))
	first := c.Now()
	if d := first.Sub(time.Now()); d > time.Second || d < -time.Second {
		t.Fatalf("Now starts %v away from the real time", d)
	}
	time.Sleep(20 * time.Millisecond)
	got := c.Since(first)
	if got < 2*time.Second || got > 10*time.Second {
		t.Fatalf("20 ms of wall time at 100x gave %v, want about 2 s", got)
	}
	until := c.Now().Add(10 * time.Second)
	time.Sleep(150 * time.Millisecond)
	if !until.Before(c.Now()) {
		t.Fatal("a 10 s window should be over after 150 ms of wall time at 100x")
	}
}

// While the run is held its Now moves at real time, and never backwards across a hold.
func TestTraceClockFollowsHolds(t *testing.T) {
	p := NewPace(100)
	c := NewTraceClock(p)
	p.SetHeld(true)
	before := c.Now()
	time.Sleep(50 * time.Millisecond)
	during := c.Since(before)
	if during < 40*time.Millisecond || during > time.Second {
		t.Fatalf("50 ms held at 100x moved Now %v; want about 50 ms", during)
	}
	p.SetHeld(false)
	if after := c.Now(); after.Before(before.Add(during)) {
		t.Fatal("Now went back when the hold ended")
	}
}

func TestTraceClockWaitsAreDivided(t *testing.T) {
	c := NewTraceClock(NewPace(1000))
	start := time.Now()
	<-c.After(time.Second)
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Fatalf("1 s at 1000x waited %v", d)
	}
}
