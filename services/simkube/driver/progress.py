"""What a simulation reports while it runs: counts, trace position, lag, failures, state.

Lag percentiles cover every event of a replay that may hold millions, so they come from a
log-scale histogram (1% buckets) rather than a list of samples: constant memory, and a
percentile costs a few hundred additions however long the replay has run. ``Progress`` is
the mutable tally the replay updates; ``ProgressSnapshot`` is an immutable copy for callers.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field, replace
from enum import Enum

MAX_FAILURES_KEPT = 100
_BUCKET_BASE = 1.01
_MIN_LAG_MS = 0.01  # everything below lands in bucket 0


class SimulationState(Enum):
    PENDING = "Pending"
    RUNNING = "Running"
    PAUSED = "Paused"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    CANCELLING = "Cancelling"
    CANCELLED = "Cancelled"

    @property
    def finished(self) -> bool:
        return self in (SimulationState.SUCCEEDED, SimulationState.FAILED,
                        SimulationState.CANCELLED)


class Operation(Enum):
    APPLY = "apply"
    DELETE = "delete"
    FIRE = "fire"  # a CronJob's firing on the trace clock (cronjobs.py)


@dataclass(frozen=True, slots=True, kw_only=True)
class FailureRecord:
    trace_offset_ms: int
    operation: Operation
    object: str
    code: int
    reason: str
    message: str
    attempts: int

    def __str__(self) -> str:
        return (f"{self.operation.value} {self.object} at +{self.trace_offset_ms}ms: "
                f"{self.reason} ({self.code}) {self.message}")


class LagStats:
    def __init__(self) -> None:
        self._buckets: dict[int, int] = {}
        self.count = 0
        self.current_ms = 0.0
        self.max_ms = 0.0

    def record(self, lag_ms: float) -> None:
        lag_ms = max(0.0, lag_ms)
        self.count += 1
        self.current_ms = lag_ms
        self.max_ms = max(self.max_ms, lag_ms)
        bucket = 0 if lag_ms < _MIN_LAG_MS else 1 + int(
            math.log(lag_ms / _MIN_LAG_MS, _BUCKET_BASE))
        self._buckets[bucket] = self._buckets.get(bucket, 0) + 1

    def percentile(self, fraction: float) -> float:
        """The lag at or below which ``fraction`` of events fell (upper edge of its bucket)."""
        if not self.count:
            return 0.0
        wanted = max(1, math.ceil(fraction * self.count))
        seen = 0
        for bucket in sorted(self._buckets):
            seen += self._buckets[bucket]
            if seen >= wanted:
                edge = 0.0 if bucket == 0 else _MIN_LAG_MS * _BUCKET_BASE ** bucket
                return min(edge, self.max_ms)
        return self.max_ms


@dataclass(frozen=True, kw_only=True)
class ProgressSnapshot:
    name: str
    state: SimulationState
    events_applied: int = 0
    events_total: int = 0
    objects_applied: int = 0
    objects_failed: int = 0
    trace_time_ms: int = 0
    trace_length_ms: int = 0
    wall_time_ms: int = 0
    lag_current_ms: float = 0.0
    lag_p50_ms: float = 0.0
    lag_p99_ms: float = 0.0
    lag_max_ms: float = 0.0
    failures: tuple[FailureRecord, ...] = ()
    message: str = ""
    speed: float = 1.0
    pods_timed: int = 0
    cleaned_up: bool = False
    root_uid: str = ""
    paused_ms: int = 0
    held_ms: int = 0
    held: bool = False
    held_since_unix_ms: int = 0  # when the hold in progress began; 0: none


@dataclass(kw_only=True)
class Progress:
    """The running tally; only the simulation's own task writes it."""

    name: str
    speed: float
    events_total: int
    trace_length_ms: int
    state: SimulationState = SimulationState.PENDING
    events_applied: int = 0
    objects_applied: int = 0
    objects_failed: int = 0
    trace_time_ms: int = 0
    pods_timed: int = 0
    message: str = ""
    cleaned_up: bool = False
    root_uid: str = ""
    lag: LagStats = field(default_factory=LagStats)
    failures: deque[FailureRecord] = field(
        default_factory=lambda: deque(maxlen=MAX_FAILURES_KEPT))

    def fail_object(self, failure: FailureRecord) -> None:
        self.objects_failed += 1
        self.failures.append(failure)

    def snapshot(self, *, wall_time_ms: int, paused_ms: int, held_ms: int = 0,
                 held: bool = False, held_since_unix_ms: int = 0) -> ProgressSnapshot:
        return ProgressSnapshot(
            name=self.name, state=self.state, events_applied=self.events_applied,
            events_total=self.events_total, objects_applied=self.objects_applied,
            objects_failed=self.objects_failed, trace_time_ms=self.trace_time_ms,
            trace_length_ms=self.trace_length_ms, wall_time_ms=wall_time_ms,
            lag_current_ms=self.lag.current_ms, lag_p50_ms=self.lag.percentile(0.5),
            lag_p99_ms=self.lag.percentile(0.99), lag_max_ms=self.lag.max_ms,
            failures=tuple(self.failures), message=self.message, speed=self.speed,
            pods_timed=self.pods_timed, cleaned_up=self.cleaned_up, root_uid=self.root_uid,
            paused_ms=paused_ms, held_ms=held_ms, held=held,
            held_since_unix_ms=held_since_unix_ms)


def with_state(snapshot: ProgressSnapshot, state: SimulationState) -> ProgressSnapshot:
    return replace(snapshot, state=state)
