package pacing

// A clock whose Now runs at the replay's pace, for code that only compares times it took
// itself: kube-scheduler's scheduling queue (its pods' backoffs and ordering windows,
// toolchain/kube-scheduler), and these parts of Karpenter.
//
// pacedClock (clock.go) keeps Now real because most controllers compare it with timestamps
// the API server wrote. Three do not, and on a real Now their windows stay wall time:
//
//   - the cluster state nominates a node for pending pods until Now + max(2 ×
//     batch-max-duration, 10 s), and the disruption controller skips nominated nodes by
//     comparing that with its own Now (state.StateNode Nominate/Nominated): at 10× a node
//     that got pods was off limits for consolidation for 200 s of trace time, not 20 s;
//   - the disruption controller's command timestamps, last-run times and consolidation
//     compute budgets (single node 3 min, multi node 1 min) against its own Now;
//   - the node termination controller waits MinDrainTime (5 s) from the Drained condition it
//     set itself with its clock: 50 s of trace time per removed node at 10×.
//
// traceClock gives these a Now that starts at the real time when the process starts and
// then advances with the pace's trace time (speed seconds per wall second, one while the
// run is held). The cluster state and the disruption controller must share one instance,
// since one writes nominations and the other reads them. Its waits are pacedClock's.

import (
	"time"

	"k8s.io/utils/clock"
)

type traceClock struct {
	pacedClock
	start time.Time // real time, with its monotonic reading, when the pace began
}

var _ clock.WithTickerAndDelayedExecution = traceClock{}

// NewTraceClock is the clock for the components above; at speed 1 the real one.
func NewTraceClock(p *Pace) clock.WithTickerAndDelayedExecution {
	if p.Speed == 1 {
		return clock.RealClock{}
	}
	return traceClock{pacedClock: pacedClock{pace: p}, start: p.Began}
}

// Now is start + the trace time since. Adding to start keeps its monotonic reading, so two
// Nows compare as Go's monotonic times do.
func (c traceClock) Now() time.Time { return c.start.Add(c.pace.Elapsed()) }

func (c traceClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }
