from __future__ import annotations

import dataclasses
import io
from pathlib import Path
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings

from simkube.trace import (
    NativeReader,
    PodLifecycle,
    PodRun,
    Trace,
    TraceFormat,
    TraceFormatError,
    open_trace,
    open_trace_bytes,
    read_trace,
    write_trace,
)
from simkube.trace.model.source import load
from simkube.trace.tools.convert import convert
from tests.unit.trace.conftest import native_bytes, sample_trace
from tests.unit.trace.strategies import traces

pytestmark = pytest.mark.unit
SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])


def simkube_document(path: Path) -> dict[str, Any]:
    def tuple_keys(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
        return {tuple(key) if isinstance(key, list) else key: value for key, value in pairs}
    return msgpack.unpackb(path.read_bytes(), strict_map_key=False,  # type: ignore[no-any-return]
                           object_pairs_hook=tuple_keys)


@pytest.mark.parametrize("name", ["cronjob.sktrace", "bare-pods.sktrace",
                                  "dsb-scaling.sktrace"])
def test_simkube_to_native_to_simkube_loses_nothing(samples: Path, tmp_path: Path,
                                                    name: str) -> None:
    native, back = tmp_path / "t.trace", tmp_path / "back.sktrace"
    assert convert(open_trace(samples / name), native).events == open_trace(
        samples / name).event_count  # type: ignore[attr-defined]
    convert(open_trace(native), back)
    original, again = simkube_document(samples / name), simkube_document(back)
    for section in ("version", "config", "events", "pod_lifecycles"):
        assert again[section] == original[section], section
    # The index is rebuilt (SimKube's SipHash values cannot be reproduced): same kinds, and
    # every object the trace applies.
    applied = {(f"{o['apiVersion']}.{o['kind']}",
                f"{o['metadata']['namespace']}/{o['metadata']['name']}")
               for event in original["events"] for o in event["applied_objs"]}
    assert {(kind, key) for kind, entries in again["index"].items() for key in entries} == applied


def test_json_sample_round_trips_through_native(samples: Path, tmp_path: Path) -> None:
    convert(open_trace(samples / "validation_trace.json"), tmp_path / "t.trace")
    convert(open_trace(tmp_path / "t.trace"), tmp_path / "back.json")
    assert read_trace(tmp_path / "back.json").events == read_trace(
        samples / "validation_trace.json").events


def test_json_target_refuses_lifecycles_before_writing(samples: Path, tmp_path: Path) -> None:
    with pytest.raises(TraceFormatError, match="1 pod lifecycle owners"):
        convert(open_trace(samples / "cronjob.sktrace"), tmp_path / "c.json")
    assert not (tmp_path / "c.json").exists()


def test_explicit_target_format(tmp_path: Path) -> None:
    write_trace(sample_trace(), tmp_path / "t.trace")
    convert(open_trace(tmp_path / "t.trace"), tmp_path / "out",
            trace_format=TraceFormat.SIMKUBE_V2)
    assert open_trace(tmp_path / "out").format is TraceFormat.SIMKUBE_V2


@SETTINGS
@given(trace=traces())
def test_native_round_trip_property(trace: Trace) -> None:
    loaded = load(open_trace_bytes(native_bytes(trace)))
    assert loaded.header == trace.header
    assert loaded.initial_state == trace.initial_state
    assert loaded.events == trace.events
    assert loaded.lifecycles == trace.lifecycles


@SETTINGS
@given(trace=traces(seconds=True, with_state=False))
def test_simkube_round_trip_property(trace: Trace, tmp_path: Path) -> None:
    path = tmp_path / "p.sktrace"
    write_trace(trace, path)
    loaded = read_trace(path)
    expected = dataclasses.replace(trace.header, version=2, created_ms=None, source_cluster=None)
    assert loaded.header == expected
    assert loaded.events == trace.events
    assert _runs(loaded.lifecycles) == _runs(trace.lifecycles)


@SETTINGS
@given(trace=traces(seconds=True, with_state=False))
def test_simkube_native_simkube_property(trace: Trace, tmp_path: Path) -> None:
    write_trace(trace, tmp_path / "a.sktrace")
    convert(open_trace(tmp_path / "a.sktrace"), tmp_path / "b.trace")
    convert(open_trace(tmp_path / "b.trace"), tmp_path / "c.sktrace")
    first, last = simkube_document(tmp_path / "a.sktrace"), simkube_document(
        tmp_path / "c.sktrace")
    assert first == last


def _runs(lifecycles: list[PodLifecycle]) -> dict[tuple[str, str], list[PodRun]]:
    return {(lc.owner_kind, lc.owner): sorted(lc.runs, key=lambda run: (run.start_ms,
                                                                        run.spec_hash or 0))
            for lc in lifecycles}


def test_native_reader_streams_from_any_file_object() -> None:
    reader = NativeReader(io.BytesIO(native_bytes(sample_trace())))
    assert reader.header == sample_trace().header
