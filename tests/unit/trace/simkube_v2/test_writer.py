from __future__ import annotations

import io
import json
from typing import Any

import msgpack
import pytest

from simkube.trace import PodLifecycle, PodRun, TraceEvent, TraceFormatError
from simkube.trace.simkube_v2.document import stable_hash
from simkube.trace.simkube_v2.writer import SimkubeV2Writer
from tests.unit.trace.conftest import HEADER, deployment, pod

pytestmark = pytest.mark.unit


def tuple_keys(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    return {tuple(key) if isinstance(key, list) else key: value for key, value in pairs}


def written(*, as_json: bool = False, state: list[Any] | None = None,
            events: list[TraceEvent] | None = None,
            lifecycles: list[PodLifecycle] | None = None) -> bytes:
    buffer = io.BytesIO()
    writer = SimkubeV2Writer(buffer, header=HEADER, as_json=as_json)
    writer.write_state(state or [])
    for event in events or []:
        writer.write_event(event)
    for lifecycle in lifecycles or []:
        writer.write_lifecycle(lifecycle)
    writer.close()
    return buffer.getvalue()


def test_document_has_simkube_sections_in_simkube_order() -> None:
    data = written(events=[TraceEvent(ts_ms=10_500, applied=[deployment()])],
                   lifecycles=[PodLifecycle(owner_kind="v1.Pod", owner="shop/p", runs=(
                       PodRun(start_ms=11_000, end_ms=12_000, spec_hash=5),
                       PodRun(start_ms=13_000)))])
    doc = msgpack.unpackb(data, strict_map_key=False, object_pairs_hook=tuple_keys)
    assert list(doc) == ["version", "config", "events", "index", "pod_lifecycles"]
    assert doc["version"] == 2
    assert doc["events"] == [{"ts": 10, "applied_objs": [deployment()], "deleted_objs": []}]
    assert doc["index"] == {"apps/v1.Deployment": {"shop/web": stable_hash(
        deployment()["spec"])}}
    assert doc["pod_lifecycles"] == {("v1.Pod", "shop/p"): {
        5: [{"Finished": [11, 12]}], stable_hash(["v1.Pod", "shop/p"]): [{"Running": 13}]}}


def test_initial_state_becomes_the_first_event() -> None:
    doc = msgpack.unpackb(written(state=[deployment("base")],
                                  events=[TraceEvent(ts_ms=5000, applied=[pod()])]))
    assert [event["ts"] for event in doc["events"]] == [5, 5]
    assert doc["events"][0]["applied_objs"] == [deployment("base")]


def test_initial_state_alone_is_timed_at_creation() -> None:
    doc = msgpack.unpackb(written(state=[pod()]))
    assert doc["events"] == [{"ts": (HEADER.created_ms or 0) // 1000, "applied_objs": [pod()],
                              "deleted_objs": []}]


def test_json_form_is_one_json_document() -> None:
    doc = json.loads(written(as_json=True, events=[TraceEvent(ts_ms=1000, applied=[pod()]),
                                                   TraceEvent(ts_ms=2000, deleted=[pod()])]))
    assert [event["ts"] for event in doc["events"]] == [1, 2]
    assert doc["pod_lifecycles"] == {}


def test_json_form_refuses_lifecycles_and_binary_values() -> None:
    with pytest.raises(TraceFormatError, match="cannot hold pod lifecycles"):
        written(as_json=True, lifecycles=[PodLifecycle(owner_kind="v1.Pod", owner="a/b",
                                                       runs=(PodRun(start_ms=1),))])
    with pytest.raises(TraceFormatError, match="cannot be written as JSON"):
        written(as_json=True, events=[TraceEvent(ts_ms=1, applied=[pod(data=b"\x00")])])
