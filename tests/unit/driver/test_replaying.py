from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from simkube.core.simtime import TimeScale
from simkube.driver.clock import ReplayClock
from simkube.driver.progress import FailureRecord, Operation, Progress
from simkube.driver.replaying import Replayer, prefetched
from simkube.driver.scanning import ReplayEvent, scan_trace
from simkube.trace import Trace
from simkube.trace.model.source import InMemorySource, TraceFormat
from tests.support.traces import build_trace, config_map

pytestmark = pytest.mark.unit


class RecordingApplier:
    """Stands in for ``Applier``: records when each operation started, can be slow or fail."""

    def __init__(self, *, slow: dict[str, float] | None = None,
                 failing: frozenset[str] = frozenset()) -> None:
        self.started: list[tuple[str, str, float]] = []
        self._slow = slow or {}
        self._failing = failing

    async def _run(self, operation: str, obj: dict[str, Any], offset_ms: int,
                   started: Any) -> FailureRecord | None:
        name = obj["metadata"]["name"]
        started()
        self.started.append((operation, name, time.monotonic()))
        await asyncio.sleep(self._slow.get(name, 0))
        if name in self._failing:
            return FailureRecord(trace_offset_ms=offset_ms, operation=Operation.APPLY,
                                 object=name, code=422, reason="Invalid", message="",
                                 attempts=1)
        return None

    async def apply(self, obj: dict[str, Any], *, offset_ms: int,
                    started: Any) -> FailureRecord | None:
        return await self._run("apply", obj, offset_ms, started)

    async def delete(self, obj: dict[str, Any], *, offset_ms: int,
                     started: Any) -> FailureRecord | None:
        return await self._run("delete", obj, offset_ms, started)


async def _replay(trace: Trace, applier: RecordingApplier, *, speed: float,
                  duration_ms: int | None = None) -> tuple[Progress, ReplayClock]:
    source = InMemorySource(trace, name="t", trace_format=TraceFormat.NATIVE, size_bytes=0)
    scan = scan_trace(source, duration_ms=duration_ms)
    clock = ReplayClock(scale=TimeScale(speed))
    progress = Progress(name="sim", speed=speed, events_total=scan.events_total,
                        trace_length_ms=scan.length_ms)
    clock.start()
    await Replayer(source=source, scan=scan, clock=clock, applier=applier,  # type: ignore[arg-type]
                   progress=progress).run()
    return progress, clock


async def test_events_start_on_time_and_are_counted() -> None:
    trace = build_trace([(0, [config_map("a")]), (1000, [config_map("b")], [config_map("a")]),
                         (2000, [config_map("c")])])
    applier = RecordingApplier(failing=frozenset({"c"}))
    progress, clock = await _replay(trace, applier, speed=20.0)
    assert (progress.events_applied, progress.objects_applied, progress.objects_failed) == (
        3, 3, 1)
    assert progress.lag.count == 3
    for operation, name, at in applier.started:
        offset = {"a": 0, "b": 1000, "c": 2000}[name] if operation == "apply" else 1000
        assert 0 <= at - clock.due(offset) < 0.02, (name, at - clock.due(offset))
    assert progress.lag.percentile(0.99) < 20


async def test_a_slow_event_does_not_delay_the_next() -> None:
    trace = build_trace([(0, [config_map("slow")]), (100, [config_map("next")])])
    applier = RecordingApplier(slow={"slow": 0.5})
    _, clock = await _replay(trace, applier, speed=1.0)
    started = {name: at for _, name, at in applier.started}
    assert started["next"] - clock.due(100) < 0.02


async def test_namespaces_go_first_within_an_event() -> None:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}}
    trace = build_trace([(0, [config_map("early"), namespace])])
    applier = RecordingApplier(slow={"ns": 0.05})
    await _replay(trace, applier, speed=1.0)
    assert [name for _, name, _ in applier.started] == ["ns", "early"]


async def test_duration_longer_than_the_trace_is_waited_for() -> None:
    trace = build_trace([(0, [config_map("only")])])
    started = time.monotonic()
    progress, _ = await _replay(trace, RecordingApplier(), speed=10.0, duration_ms=3000)
    assert time.monotonic() - started >= 0.3
    assert progress.events_applied == 1


async def test_prefetching_keeps_order_across_batches() -> None:
    events = (ReplayEvent(offset_ms=index, applied=[], deleted=[]) for index in range(10))
    offsets = [event.offset_ms async for event in prefetched(events, batch=3)]
    assert offsets == list(range(10))
