from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import msgpack
import pytest

from simkube.trace import PodRun, TraceFormat, TraceFormatError, open_trace, open_trace_bytes
from simkube.trace.simkube_v2.reader import SimkubeV2Source, load_simkube_json
from tests.unit.trace.conftest import deployment

pytestmark = pytest.mark.unit


def document(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "version": 2, "config": {"trackedObjects": {"apps/v1.Deployment": {}}},
        "events": [{"ts": 10, "applied_objs": [deployment()], "deleted_objs": []},
                   {"ts": 20, "applied_objs": [], "deleted_objs": [deployment()]}],
        "index": {}, "pod_lifecycles": {}}
    base.update(overrides)
    return base


def packed(doc: dict[Any, Any]) -> bytes:
    return msgpack.packb(doc, use_bin_type=True)


def test_reads_the_cronjob_sample_including_lifecycles(samples: Path) -> None:
    source = open_trace(samples / "cronjob.sktrace")
    assert isinstance(source, SimkubeV2Source)
    assert source.event_count == 3
    (lifecycle,) = source.lifecycles()
    assert (lifecycle.owner_kind, lifecycle.owner) == ("batch/v1.CronJob",
                                                       "default/hello-simkube")
    assert lifecycle.runs[0] == PodRun(start_ms=1743286861000, end_ms=1743286891000,
                                       spec_hash=10855072724872030168)
    events = list(source.events())
    assert [event.ts_ms for event in events] == [1743286823000, 1743286823000, 1743287028000]
    assert events[2].deleted[0]["metadata"]["name"] == "hello-simkube"


def test_reads_running_lifecycles(samples: Path) -> None:
    lifecycles = sorted(open_trace(samples / "bare-pods.sktrace").lifecycles(),
                        key=lambda lc: lc.owner)
    assert [run.running for lc in lifecycles for run in lc.runs] == [False, False, False, True]
    assert lifecycles[3].owner == "testing/bare-pod-1781282630"


def test_events_stream_again_on_every_pass() -> None:
    source = open_trace_bytes(packed(document()))
    assert [e.ts_ms for e in source.events()] == [e.ts_ms for e in source.events()] == [
        10_000, 20_000]
    assert list(source.initial_state()) == []


def test_events_may_come_before_config_in_the_document() -> None:
    doc = document()
    reordered = {"events": doc["events"], "pod_lifecycles": {}, "config": doc["config"],
                 "version": 2, "newer_section": [1, 2]}
    source = open_trace_bytes(packed(reordered))
    assert source.header.tracked_kinds[0].kind_key == "apps/v1.Deployment"
    assert len(list(source.events())) == 2


def test_backwards_timestamps_are_readable_for_validate_to_report() -> None:
    doc = document(events=[{"ts": 20}, {"ts": 10}])
    assert [e.ts_ms for e in open_trace_bytes(packed(doc)).events()] == [20_000, 10_000]


@pytest.mark.parametrize(("doc", "problem"), [
    ([1, 2], "undecodable msgpack: Unexpected type header"),
    ({"version": 2, "config": {"trackedObjects": {}}}, "the document has no events"),
    (document(version=3), "version 3 is not supported"),
    (document(config={"trackedObjects": 5}), "trackedObjects must be a map"),
    (document(pod_lifecycles={"x": {}}), "lifecycle key"),
])
def test_bad_documents_fail_at_open(doc: Any, problem: str) -> None:
    with pytest.raises(TraceFormatError, match=problem) as caught:
        SimkubeV2Source(lambda: io.BytesIO(packed(doc)), name="bad.sktrace",
                        size_bytes=len(packed(doc)))
    assert str(caught.value).startswith("bad.sktrace: ")


def test_bad_event_fails_when_reached_naming_it() -> None:
    source = open_trace_bytes(packed(document(events=[{"ts": 1}, {"ts": "late"}])),
                              name="x.sktrace")
    events = source.events()
    next(events)
    with pytest.raises(TraceFormatError, match=r"x\.sktrace: events\[1\]\.ts: expected Unix"):
        next(events)


def _read_everything(data: bytes) -> None:
    list(open_trace_bytes(data).events())


def test_truncated_and_trailing_data_are_refused() -> None:
    data = packed(document())
    for size in range(1, len(data)):
        with pytest.raises(TraceFormatError):
            _read_everything(data[:size])
    with pytest.raises(TraceFormatError, match="unexpected data after the trace document"):
        open_trace_bytes(data + b"\x00")


def test_json_form(samples: Path) -> None:
    source = open_trace(samples / "validation_trace.json")
    assert source.format is TraceFormat.SIMKUBE_V2_JSON
    (event,) = source.events()
    assert event.applied[0]["metadata"]["name"] == "test-deployment"


@pytest.mark.parametrize(("data", "problem"), [
    (b"{", "not valid JSON"),
    (b"[1]", "a SimKube trace is a JSON object"),
    (json.dumps({"version": 2}).encode(), "no config, events"),
    (json.dumps(document(events={})).encode(), "events must be a list"),
    (json.dumps(document(pod_lifecycles={"k": {}})).encode(), "cannot hold pod lifecycles"),
    (b"[" * 100_000, "not valid JSON"),
])
def test_bad_json_is_refused_with_the_file_name(data: bytes, problem: str) -> None:
    with pytest.raises(TraceFormatError, match=problem) as caught:
        load_simkube_json(data, name="v.json")
    assert caught.value.source == "v.json"
