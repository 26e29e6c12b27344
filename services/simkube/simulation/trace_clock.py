"""A run's trace time between sk-driver's progress reports, as sk-ctrl and its recorder see it.

sk-driver reports its trace time about once a second when nothing else happens, so a clock
that only repeats the last report stalls, then jumps: at speed 50 a stall of 1.5 s is 75 s of
trace time, and every pending time measured across it is off by as much. The replay clock
itself runs continuously at the run's speed while the run is running, so between reports
trace time is the last one plus the wall time since, converted by the run's ``TimeScale`` —
at its held speed (real time) while sk-ctrl holds the run, never past the trace's length,
and frozen while the run is not running.

It lived in ``core.simtime``, but it is about a Simulation run followed from outside the
driver (sk-ctrl feeds it reports, the results recorder reads it), not about converting time,
and core should not know what a run's progress report is. It sits here rather than in
``ctrl`` because it needs nothing of sk-ctrl's machinery and the recorder may read it too.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from simkube.core.simtime import TimeScale


class TraceClock:
    """Trace time of one run: the last report, moved on at the run's speed while it runs."""

    def __init__(self, *, scale: TimeScale,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self._scale = scale
        self._monotonic = monotonic
        self._trace_s = 0.0
        self._at = monotonic()
        self._running = False
        self._held = False
        self._limit_s: float | None = None

    def report(self, *, trace_s: float, running: bool, held: bool = False,
               length_s: float | None = None) -> None:
        self._trace_s, self._at = trace_s, self._monotonic()
        self._running, self._held = running, held
        self._limit_s = length_s if length_s else None

    def now(self) -> float:
        if not self._running:
            return self._trace_s
        moved = self._trace_s + self._scale.to_trace(self._monotonic() - self._at,
                                                     held=self._held)
        return min(moved, self._limit_s) if self._limit_s is not None else moved
