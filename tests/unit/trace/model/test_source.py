from __future__ import annotations

import pytest

from simkube.trace import TraceFormat
from simkube.trace.model.source import InMemorySource, load
from tests.unit.trace.conftest import sample_trace

pytestmark = pytest.mark.unit


def test_in_memory_source_hands_out_copies_callers_may_change() -> None:
    trace = sample_trace()
    source = InMemorySource(trace, name="mem", trace_format=TraceFormat.SIMKUBE_V2_JSON,
                            size_bytes=0)
    for event in source.events():
        for obj in event.applied:
            obj["metadata"]["name"] = "changed"
    next(source.initial_state())["spec"] = {}
    assert source.trace == sample_trace()
    assert [event.ts_ms for event in source.events()] == [event.ts_ms for event in trace.events]


def test_load_collects_everything() -> None:
    trace = sample_trace()
    source = InMemorySource(trace, name="mem", trace_format=TraceFormat.SIMKUBE_V2_JSON,
                            size_bytes=0)
    assert load(source) == trace
