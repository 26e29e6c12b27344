"""The time steps of ``skctl trace edit``: cut a window, and compress or stretch time.

A window is not a plain filter: a Deployment created before the window still exists inside
it. So everything before the window's start is folded into the initial state (the last
version of each object that is still alive), which is exactly the state the replay must
begin from. Pod runs are clipped to the window the same way, and recorded usage (in trace
time, from the first event) is re-timed to the new first event, keeping the sample in force
when the window opens.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from itertools import chain, takewhile

from simkube.trace.model.types import KubeObject, ObjectRef, PodLifecycle, PodRun, TraceEvent
from simkube.trace.model.usage import UsageSample, WorkloadUsage
from simkube.trace.tools.edit_steps import TimeWindow
from simkube.trace.tools.stream import TraceStream


class _Window:
    """Consumes the events before the window lazily, on first use of state or events."""

    def __init__(self, step: TimeWindow, stream: TraceStream) -> None:
        self._step = step
        self._stream = stream
        self._events: Iterator[TraceEvent] | None = None
        self.start_ms: int | None = None
        self.end_ms: int | None = None
        self.first_in_ms: int | None = None  # the first event read, and the first written
        self.first_out_ms: int | None = None
        self.state: list[KubeObject] = []

    def _prepare(self) -> Iterator[TraceEvent]:
        if self._events is not None:
            return self._events
        state: dict[tuple[str, str], KubeObject] = {}
        for obj in self._stream.initial_state:
            state[_key(obj)] = obj
        events = iter(self._stream.events)
        first = next(events, None)
        if first is None:
            self.state = list(state.values())
            self._events = iter(())
            return self._events
        step = self._step
        self.first_in_ms = first.ts_ms
        self.start_ms = step.start.resolve(first.ts_ms) if step.start else first.ts_ms
        self.end_ms = (step.end.resolve(first.ts_ms) if step.end
                       else self.start_ms + step.duration_ms if step.duration_ms is not None
                       else None)
        pending: TraceEvent | None = first
        while pending is not None and pending.ts_ms < self.start_ms:
            for obj in pending.deleted:
                state.pop(_key(obj), None)
            for obj in pending.applied:
                state[_key(obj)] = obj
            pending = next(events, None)
        self.state = list(state.values())
        rest = chain([] if pending is None else [pending], events)
        end = self.end_ms
        # takewhile stops reading at the window's end instead of skipping to the file's end
        self._events = rest if end is None else takewhile(lambda e: e.ts_ms < end, rest)
        return self._events

    def initial_state(self) -> Iterator[KubeObject]:
        self._prepare()
        yield from self.state

    def events(self) -> Iterator[TraceEvent]:
        for event in self._prepare():
            if self.first_out_ms is None:
                self.first_out_ms = event.ts_ms
            yield event

    def usage(self) -> tuple[WorkloadUsage, ...]:
        if self.first_in_ms is None or self.first_out_ms is None:
            return ()  # no event in the window: nothing to play the usage against
        shift = self.first_out_ms - self.first_in_ms
        end = None if self.end_ms is None else self.end_ms - self.first_in_ms
        kept = []
        for usage in self._stream.usage():
            held = usage.at(shift)
            samples = [replace(held, t_ms=0)] if held is not None else []
            samples += [replace(sample, t_ms=sample.t_ms - shift) for sample in usage.samples
                        if sample.t_ms > shift and (end is None or sample.t_ms < end)]
            if samples:
                kept.append(replace(usage, samples=tuple(samples)))
        return tuple(kept)

    def lifecycles(self) -> list[PodLifecycle]:
        start, end = self.start_ms, self.end_ms
        clipped = []
        for lifecycle in self._stream.lifecycles():
            runs = tuple(_clip(run, end) for run in lifecycle.runs
                         if (start is None or run.end_ms is None or run.end_ms > start)
                         and (end is None or run.start_ms < end))
            if runs:
                clipped.append(replace(lifecycle, runs=runs))
        return clipped


def _key(obj: KubeObject) -> tuple[str, str]:
    ref = ObjectRef.of(obj)
    return ref.kind_key, ref.ns_name


def _clip(run: PodRun, end: int | None) -> PodRun:
    if end is not None and run.end_ms is not None and run.end_ms > end:
        return replace(run, end_ms=None)  # still running when the trace ends
    return run


def window(step: TimeWindow, stream: TraceStream) -> TraceStream:
    cut = _Window(step, stream)
    return replace(stream, initial_state=cut.initial_state(), events=cut.events(),
                   lifecycles=cut.lifecycles, usage=cut.usage)


def stretch_time(factor: float, stream: TraceStream) -> TraceStream:
    """Times relative to the first event multiplied by ``factor`` (0.5: twice as fast)."""
    origin: list[int] = []

    def at(ts_ms: int) -> int:
        return origin[0] + round((ts_ms - origin[0]) * factor)

    def events() -> Iterator[TraceEvent]:
        for event in stream.events:
            if not origin:
                origin.append(event.ts_ms)
            event.ts_ms = at(event.ts_ms)
            yield event

    def lifecycles() -> list[PodLifecycle]:
        if not origin:
            return stream.lifecycles()
        return [replace(lc, runs=tuple(replace(run, start_ms=max(0, at(run.start_ms)),
                                               end_ms=None if run.end_ms is None
                                               else max(0, at(run.end_ms)))
                                       for run in lc.runs))
                for lc in stream.lifecycles()]

    def usage() -> tuple[WorkloadUsage, ...]:
        return tuple(_stretched(series, factor) for series in stream.usage())

    return replace(stream, events=events(), lifecycles=lifecycles, usage=usage)


def _stretched(usage: WorkloadUsage, factor: float) -> WorkloadUsage:
    """Sample times (trace time) times ``factor``; samples that round onto one instant keep
    the last of them, so the series stays strictly increasing."""
    samples: dict[int, UsageSample] = {}
    for sample in usage.samples:
        t_ms = round(sample.t_ms * factor)
        samples[t_ms] = replace(sample, t_ms=t_ms)
    return replace(usage, period_ms=max(1, round(usage.period_ms * factor)),
                   samples=tuple(samples.values()))
