"""Production's pod-age wait, which a held replay's Cluster Autoscaler skips, in trace time.

CA 1.36 plans nothing in a loop whose unschedulable pods are all younger than 2 s of wall
time, and the loop after that comes a scan interval later: in the recorded cluster a scale-up
for pods that just arrived is planned about one scan (10 s) after them, measured 10.16 s at
speed 1 (docs/fidelity.md). That wait is a Go constant on the wall clock, so a run faster
than real time bypasses it (``core.replay_flags``) and holds its clock while CA reacts
(``ctrl/holding.py``): CA then plans at the pods' own trace time, a scan earlier than
production, and every node of a burst comes that much early (fidelity run 3: cost +5 %,
pending p90 -12 % to -17 %). Keeping the wall wait instead costs 2·speed seconds of trace or,
held, 2 s of wall time per scale-up (tried and reverted: docs/fidelity.md, run 4).

So the wait is put back where trace time is kept: an instance CA asked for during a hold
(IncreaseSize while the clock stood still for pods that had just turned unschedulable, which
production would have seen as younger than 2 s) starts its provisioning delay later by the
run's ``age_wait_s`` (sk-ctrl publishes one production scan interval when it bypassed the
wait, 0 otherwise). CA's plan itself is not delayed: it sees the instances as upcoming at
once, as production's would a scan later, and pods that arrive within that scan are planned
by later loops instead of joining the plan (a difference this leaves).

The instances of one IncreaseSize appear as placeholder pods a few milliseconds after it, so
requests are queued per group and handed to new instances in order of arrival; a request no
instance took within ``REQUEST_TTL_S`` (a failed scale-up) is dropped. Whether the request
fell in a hold is decided when the holds are known: sk-cloudprov hears of a hold's start
tens of milliseconds after it began, so an undecided instance is asked again each time its
deadline is computed, and once in a hold it stays so.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

from simkube.cloudprov.current_run import CurrentRun

REQUEST_TTL_S = 10.0  # wall seconds a request waits for its placeholder pod


class AgeWaits:
    """Which instances owe production's pod-age wait, in trace seconds."""

    def __init__(self, *, current: CurrentRun,
                 clock: Callable[[], float] = time.time) -> None:
        self._current, self._clock = current, clock
        self._run = current.timing.run
        self._requests: dict[str, deque[float]] = {}  # group -> Unix times, oldest first
        self._requested: dict[tuple[str, str], float | None] = {}  # instance -> its request
        self._owing: set[tuple[str, str]] = set()  # instances whose request fell in a hold

    def requested(self, group: str, count: int) -> None:
        """CA asked ``group`` for ``count`` more instances just now."""
        self._follow_run()
        self._requests.setdefault(group, deque()).extend([self._clock()] * count)

    def wait_for(self, *, group: str, instance: str) -> float:
        """Trace seconds ``instance`` adds to its provisioning delay (0 or the run's
        ``age_wait_s``); its request is the group's oldest unclaimed one at the first ask."""
        self._follow_run()
        wait = self._current.timing.age_wait_s
        key = (group, instance)
        if wait <= 0:
            return 0.0
        if key not in self._requested:
            self._requested[key] = self._claim(group)
        if key not in self._owing:
            at = self._requested[key]
            if at is None or not self._current.held_at(at):
                return 0.0
            self._owing.add(key)
        return wait

    def _claim(self, group: str) -> float | None:
        queue = self._requests.get(group)
        while queue:
            at = queue.popleft()
            if self._clock() - at <= REQUEST_TTL_S:
                return at
        return None

    def _follow_run(self) -> None:
        """A new run starts with nothing owed."""
        if self._current.timing.run != self._run:
            self._run = self._current.timing.run
            self._requests.clear()
            self._requested.clear()
            self._owing.clear()
