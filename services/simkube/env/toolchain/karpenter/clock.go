package main

// A clock for replays at a speed: Karpenter reads the time through k8s.io/utils/clock, so
// giving it one whose waits are shorter makes its timers keep pace with the replay.
//
// Now and Since stay real on purpose. Karpenter compares them with timestamps the API server
// wrote (a NodeClaim's lastPodEventTime, a condition's transition time), which are wall
// time; a clock that ran fast there would see every such timestamp as too old. Only the
// waits (After, NewTimer and its Reset, AfterFunc, Sleep, Tick, NewTicker) are divided.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"k8s.io/utils/clock"
)

// SpeedVariable names the environment variable simkube sets when it starts Karpenter for
// a replay at a speed (trace seconds per wall second).
const SpeedVariable = "SIMKUBE_SPEED"

// maxSpeed is simkube's own upper bound (core/simtime.py MAX_SPEED), so the two agree on
// what a valid speed is.
const maxSpeed = 1_000_000.0

// parseSpeed reads the variable's value: empty means 1 (a process started by hand behaves
// exactly as upstream's); anything that is not a finite number in (0, maxSpeed] is refused,
// because a silently ignored typo would make a replay unfaithful without a trace of why.
func parseSpeed(value string) (float64, error) {
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

// scaledClock is the real clock with every wait divided by speed.
type scaledClock struct {
	speed float64
}

// The widest interface of the package, so code that type-asserts for tickers or AfterFunc
// finds them as it would on clock.RealClock.
var _ clock.WithTickerAndDelayedExecution = scaledClock{}

// newClock is the clock Karpenter gets at speed: at 1 the real one itself, so an unset
// variable changes nothing.
func newClock(speed float64) clock.Clock {
	if speed == 1 {
		return clock.RealClock{}
	}
	return scaledClock{speed: speed}
}

// wall turns a wait Karpenter asks for (trace time) into the wall time to wait. A positive
// wait stays positive: rounding it to zero would turn "wait a little" into "do not wait",
// and Go treats a zero or negative ticker period as an error.
func (c scaledClock) wall(d time.Duration) time.Duration {
	if d <= 0 {
		return d
	}
	return max(time.Duration(float64(d)/c.speed), 1)
}

func (scaledClock) Now() time.Time                  { return time.Now() }
func (scaledClock) Since(t time.Time) time.Duration { return time.Since(t) }

func (c scaledClock) After(d time.Duration) <-chan time.Time { return time.After(c.wall(d)) }
func (c scaledClock) Sleep(d time.Duration)                  { time.Sleep(c.wall(d)) }

func (c scaledClock) NewTimer(d time.Duration) clock.Timer {
	return &scaledTimer{timer: time.NewTimer(c.wall(d)), clock: c}
}

func (c scaledClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	return &scaledTimer{timer: time.AfterFunc(c.wall(d), f), clock: c}
}

func (c scaledClock) Tick(d time.Duration) <-chan time.Time {
	//nolint:staticcheck // the interface's own Tick; its callers accept that it never stops
	return time.Tick(c.wall(d))
}

func (c scaledClock) NewTicker(d time.Duration) clock.Ticker {
	return &scaledTicker{ticker: time.NewTicker(c.wall(d))}
}

// scaledTimer keeps the clock so a Reset is divided like the wait that created it (the
// provisioner's batcher resets its idle timer on every new pod).
type scaledTimer struct {
	timer *time.Timer
	clock scaledClock
}

func (t *scaledTimer) C() <-chan time.Time        { return t.timer.C }
func (t *scaledTimer) Stop() bool                 { return t.timer.Stop() }
func (t *scaledTimer) Reset(d time.Duration) bool { return t.timer.Reset(t.clock.wall(d)) }

type scaledTicker struct {
	ticker *time.Ticker
}

func (t *scaledTicker) C() <-chan time.Time { return t.ticker.C }
func (t *scaledTicker) Stop()               { t.ticker.Stop() }
