package pacing

// The replay's pace: how much trace time one wall second makes, which is the run's speed
// except while sk-ctrl holds the run's clock for the autoscaler (ctrl/holding.py). A hold
// does not stop trace time, it runs it at real time, so the pods, scheduler and autoscaler
// latencies inside it count as they did in the recorded cluster. Every wait of the wrapper's
// clocks (clock.go, traceclock.go) is measured on this pace: Karpenter's batch windows,
// disruption waits and node registration delays then pass at real time during a hold, as
// sk-cloudprov's provisioning deadlines do for Cluster Autoscaler. Without it a hold of h
// wall seconds shortened each wait it overlapped by h × (speed − 1) seconds of trace.
//
// The holds come from the run's ConfigMap (holdwatch.go) and take effect when this process
// learns of them, not retroactively: trace time as read here only moves forward.

import (
	"sync"
	"time"
)

// heldRate is the trace seconds per wall second during a hold (core/simtime.py HOLD_SPEED).
const heldRate = 1.0

type Pace struct {
	Speed float64
	Began time.Time // real time, with its monotonic reading, when the pace began

	mu      sync.Mutex
	wall    time.Time     // when the rate last changed (with its monotonic reading)
	trace   time.Duration // trace time elapsed since the pace began, at wall
	held    bool
	changed chan struct{} // closed when the rate changes, so waiters recompute
}

func NewPace(speed float64) *Pace {
	now := time.Now()
	return &Pace{Speed: speed, Began: now, wall: now, changed: make(chan struct{})}
}

func (p *Pace) rateLocked() float64 {
	if p.held {
		return min(p.Speed, heldRate)
	}
	return p.Speed
}

func (p *Pace) elapsedLocked(now time.Time) time.Duration {
	return p.trace + time.Duration(float64(now.Sub(p.wall))*p.rateLocked())
}

// elapsed is the trace time since the pace began.
func (p *Pace) Elapsed() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.elapsedLocked(time.Now())
}

// setHeld starts (true) or ends (false) a hold now; waiters in progress recompute. It
// reports whether that changed anything.
func (p *Pace) SetHeld(held bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held == held {
		return false
	}
	now := time.Now()
	p.trace, p.wall, p.held = p.elapsedLocked(now), now, held
	close(p.changed)
	p.changed = make(chan struct{})
	return true
}

// wallFor is the wall time d of trace time takes at the current rate, a positive d staying
// positive: rounding it to zero would turn "wait a little" into "do not wait", and Go
// treats a zero or negative ticker period as an error.
func (p *Pace) WallFor(d time.Duration) time.Duration {
	if d <= 0 {
		return d
	}
	p.mu.Lock()
	rate := p.rateLocked()
	p.mu.Unlock()
	return max(time.Duration(float64(d)/rate), 1)
}

// sleep waits until d of trace time has passed, following holds that begin or end meanwhile;
// false if stop closed first.
func (p *Pace) Sleep(d time.Duration, stop <-chan struct{}) bool {
	p.mu.Lock()
	target := p.elapsedLocked(time.Now()) + d
	p.mu.Unlock()
	for {
		p.mu.Lock()
		left := target - p.elapsedLocked(time.Now())
		rate, changed := p.rateLocked(), p.changed
		p.mu.Unlock()
		if left <= 0 {
			return true
		}
		timer := time.NewTimer(max(time.Duration(float64(left)/rate), 1))
		select {
		case <-timer.C:
		case <-changed:
			timer.Stop()
		case <-stop:
			timer.Stop()
			return false
		}
	}
}
