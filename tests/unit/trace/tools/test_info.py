from __future__ import annotations

from pathlib import Path

import pytest

from simkube.trace import Trace, TraceFormat, open_trace, read_trace, write_trace
from simkube.trace.model.source import InMemorySource
from simkube.trace.tools.info import summarise
from tests.unit.trace.conftest import deployment, sample_trace

pytestmark = pytest.mark.unit
KEYS = ["format", "version", "start_ts_ms", "end_ts_ms", "events", "applied", "deleted",
        "applied_by_kind", "deleted_by_kind", "namespaces", "lifecycle_owners", "lifecycles",
        "bytes"]


def test_dsb_scaling_counts(samples: Path) -> None:
    info = summarise(open_trace(samples / "dsb-scaling.sktrace")).to_json()
    assert list(info) == KEYS
    assert info == {
        "format": "simkube-v2", "version": 2, "start_ts_ms": 1710892138000,
        "end_ts_ms": 1710893272000, "events": 19, "applied": 46, "deleted": 0,
        "applied_by_kind": {"apps/v1.Deployment": 46}, "deleted_by_kind": {},
        "namespaces": ["dsb"], "lifecycle_owners": 0, "lifecycles": 0, "bytes": 67327}


def test_cronjob_counts(samples: Path) -> None:
    info = summarise(open_trace(samples / "cronjob.sktrace")).to_json()
    assert (info["events"], info["applied"], info["deleted"]) == (3, 1, 1)
    assert info["applied_by_kind"] == info["deleted_by_kind"] == {"batch/v1.CronJob": 1}
    assert (info["lifecycle_owners"], info["lifecycles"]) == (1, 3)
    assert (info["start_ts_ms"], info["end_ts_ms"]) == (1743286823000, 1743287028000)


def test_bare_pods_counts(samples: Path) -> None:
    info = summarise(open_trace(samples / "bare-pods.sktrace")).to_json()
    assert (info["events"], info["applied"], info["deleted"]) == (4, 4, 0)
    assert info["applied_by_kind"] == {"v1.Pod": 4}
    assert (info["lifecycle_owners"], info["lifecycles"]) == (4, 4)
    assert info["namespaces"] == ["testing"]


def test_validation_trace_counts(samples: Path) -> None:
    info = summarise(open_trace(samples / "validation_trace.json")).to_json()
    assert (info["format"], info["events"], info["applied"]) == ("simkube-v2", 1, 1)


def test_native_counts_match_the_simkube_original(samples: Path, tmp_path: Path) -> None:
    for name in ("cronjob.sktrace", "bare-pods.sktrace", "dsb-scaling.sktrace"):
        original = summarise(open_trace(samples / name)).to_json()
        write_trace(read_trace(samples / name), tmp_path / "n.trace")
        native = summarise(open_trace(tmp_path / "n.trace")).to_json()
        assert (native["format"], native["version"]) == ("native", 2)
        assert native["bytes"] < original["bytes"]
        for key in KEYS[2:-1]:
            assert native[key] == original[key], (name, key)


def test_initial_state_counts_as_applied_and_empty_traces_have_no_span() -> None:
    trace = sample_trace()
    info = summarise(InMemorySource(trace, name="m", trace_format=TraceFormat.NATIVE,
                                    size_bytes=1)).to_json()
    assert info["applied"] == 1 + 3
    assert info["applied_by_kind"] == {"apps/v1.Deployment": 3, "v1.Pod": 1}
    empty = summarise(InMemorySource(Trace(initial_state=[deployment()]), name="m",
                                     trace_format=TraceFormat.NATIVE, size_bytes=1)).to_json()
    assert (empty["start_ts_ms"], empty["end_ts_ms"], empty["events"]) == (None, None, 0)
