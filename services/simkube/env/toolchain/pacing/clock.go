package pacing

// A clock for replays at a speed: Karpenter and kube-scheduler read the time through
// k8s.io/utils/clock, so giving them one whose waits are shorter makes their timers keep pace
// with the replay.
//
// pacedClock's Now and Since stay real on purpose. Karpenter compares them with timestamps
// the API server wrote (a NodeClaim's lastPodEventTime, a condition's transition time),
// which are wall time; a clock that ran fast there would see every such timestamp as too
// old. Only the waits (After, NewTimer and its Reset, AfterFunc, Sleep, Tick, NewTicker)
// are in trace time, on the replay's pace (pace.go): divided by the speed, and at real
// time while the run's clock is held.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// SpeedVariable names the environment variable simkube sets when it starts a paced
// component for a replay at a speed (trace seconds per wall second).
const SpeedVariable = "SIMKUBE_SPEED"

// maxSpeed is simkube's own upper bound (core/simtime.py MAX_SPEED), so the two agree on
// what a valid speed is.
const maxSpeed = 1_000_000.0

// ParseSpeed reads the variable's value: empty means 1 (a process started by hand behaves
// exactly as upstream's); anything that is not a finite number in (0, maxSpeed] is refused,
// because a silently ignored typo would make a replay unfaithful without a trace of why.
func ParseSpeed(value string) (float64, error) {
	text := strings.TrimSpace(value)
	if text == "" {
		return 1, nil
	}
	speed, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return 0, fmt.Errorf("%s=%q is not a number", SpeedVariable, value)
	}
	if math.IsNaN(speed) || math.IsInf(speed, 0) || speed <= 0 {
		return 0, fmt.Errorf("%s=%q must be a positive, finite number", SpeedVariable, value)
	}
	if speed > maxSpeed {
		return 0, fmt.Errorf("%s=%q is above the maximum %g", SpeedVariable, value, maxSpeed)
	}
	return speed, nil
}

// pacedClock is the real clock with every wait measured in trace time on its pace.
type pacedClock struct {
	pace *Pace
}

// The widest interface of the package, so code that type-asserts for tickers or AfterFunc
// finds them as it would on clock.RealClock.
var _ clock.WithTickerAndDelayedExecution = pacedClock{}

// NewClock is the real-Now clock at the pace's speed: at 1 the real one itself, so an unset
// variable changes nothing (runs at speed 1 never hold).
func NewClock(p *Pace) clock.WithTickerAndDelayedExecution {
	if p.Speed == 1 {
		return clock.RealClock{}
	}
	return pacedClock{pace: p}
}

func (pacedClock) Now() time.Time                  { return time.Now() }
func (pacedClock) Since(t time.Time) time.Duration { return time.Since(t) }

func (c pacedClock) After(d time.Duration) <-chan time.Time { return c.NewTimer(d).C() }
func (c pacedClock) Sleep(d time.Duration)                  { c.pace.Sleep(d, nil) }

func (c pacedClock) NewTimer(d time.Duration) clock.Timer {
	t := &pacedTimer{pace: c.pace, c: make(chan time.Time, 1)}
	t.Reset(d)
	return t
}

func (c pacedClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	t := &pacedTimer{pace: c.pace, f: f}
	t.Reset(d)
	return t
}

func (c pacedClock) Tick(d time.Duration) <-chan time.Time {
	if d <= 0 {
		return nil // as time.Tick
	}
	return c.NewTicker(d).C()
}

func (c pacedClock) NewTicker(d time.Duration) clock.Ticker {
	if d <= 0 {
		panic("non-positive interval for NewTicker") // as time.NewTicker
	}
	t := &pacedTicker{c: make(chan time.Time, 1), stop: make(chan struct{})}
	go func() {
		for c.pace.Sleep(d, t.stop) {
			select {
			case t.c <- time.Now():
			default: // a slow reader drops ticks, as with time.Ticker
			}
		}
	}()
	return t
}

// pacedTimer behaves as a time.Timer of the channel kind Karpenter was written against:
// a fired timer's value waits in a buffer of one, and Stop reports false once it has fired,
// so the batcher's "if !Stop() { <-C() }" before a Reset finds it. A timer stopped or reset
// before it fires never delivers.
type pacedTimer struct {
	pace *Pace
	c    chan time.Time // nil for AfterFunc
	f    func()

	mu   sync.Mutex
	stop chan struct{} // the armed wait's; nil once fired or stopped
}

func (t *pacedTimer) C() <-chan time.Time { return t.c }

func (t *pacedTimer) Stop() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.disarmLocked()
}

func (t *pacedTimer) Reset(d time.Duration) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	active := t.disarmLocked()
	stop := make(chan struct{})
	t.stop = stop
	go func() {
		if t.pace.Sleep(d, stop) {
			t.fire(stop)
		}
	}()
	return active
}

func (t *pacedTimer) disarmLocked() bool {
	if t.stop == nil {
		return false
	}
	close(t.stop)
	t.stop = nil
	return true
}

// fire delivers, unless the wait that ended was stopped or replaced meanwhile.
func (t *pacedTimer) fire(stop chan struct{}) {
	t.mu.Lock()
	if t.stop != stop {
		t.mu.Unlock()
		return
	}
	t.stop = nil
	t.mu.Unlock()
	if t.f != nil {
		t.f()
		return
	}
	select {
	case t.c <- time.Now():
	default:
	}
}

type pacedTicker struct {
	c    chan time.Time
	stop chan struct{}
	once sync.Once
}

func (t *pacedTicker) C() <-chan time.Time { return t.c }
func (t *pacedTicker) Stop()               { t.once.Do(func() { close(t.stop) }) }
