package pacing

import (
	"testing"
	"time"

	"k8s.io/utils/clock"
)

func TestParseSpeed(t *testing.T) {
	good := map[string]float64{"": 1, " ": 1, "1": 1, "10": 10, "2.5": 2.5, "1e6": 1e6}
	for text, want := range good {
		got, err := ParseSpeed(text)
		if err != nil || got != want {
			t.Errorf("ParseSpeed(%q) = %v, %v; want %v", text, got, err, want)
		}
	}
	for _, text := range []string{"fast", "0", "-2", "NaN", "Inf", "+Inf", "2e6", "10x"} {
		if _, err := ParseSpeed(text); err == nil {
			t.Errorf("ParseSpeed(%q) accepted a bad speed", text)
		}
	}
}

func TestSpeedOneIsTheRealClock(t *testing.T) {
	if c := NewClock(NewPace(1)); c != (clock.RealClock{}) {
		t.Fatalf("NewClock at speed 1 = %T; want clock.RealClock", c)
	}
}

func TestNowStaysReal(t *testing.T) {
	c := pacedClock{pace: NewPace(1000)}
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
	c := pacedClock{pace: NewPace(100)}
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

// The batcher's idiom: a timer stopped after it fired still has its value to drain.
func TestStopAfterFiringLeavesTheValue(t *testing.T) {
	timer := pacedClock{pace: NewPace(1000)}.NewTimer(time.Second) // 1 ms of wall
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
	c := pacedClock{pace: NewPace(100)}
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
