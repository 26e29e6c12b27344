from __future__ import annotations

from pathlib import Path

import pytest

from simkube.trace import Trace, TraceFormat, open_trace, read_trace, write_trace
from simkube.trace.model.source import InMemorySource
from simkube.trace.model.usage import RecordedUsage
from simkube.trace.tools.info import summarise, summarise_usage
from tests.unit.trace.conftest import deployment, sample_trace, usage_trace

pytestmark = pytest.mark.unit
KEYS = ["format", "version", "start_ts_ms", "end_ts_ms", "events", "applied", "deleted",
        "applied_by_kind", "deleted_by_kind", "namespaces", "lifecycle_owners", "lifecycles",
        "bytes", "usage"]


def test_dsb_scaling_counts(samples: Path) -> None:
    info = summarise(open_trace(samples / "dsb-scaling.sktrace")).to_json()
    assert list(info) == KEYS
    assert info == {
        "format": "simkube-v2", "version": 2, "start_ts_ms": 1710892138000,
        "end_ts_ms": 1710893272000, "events": 19, "applied": 46, "deleted": 0,
        "applied_by_kind": {"apps/v1.Deployment": 46}, "deleted_by_kind": {},
        "namespaces": ["dsb"], "lifecycle_owners": 0, "lifecycles": 0, "bytes": 67327,
        "usage": {"workloads": 0, "samples": 0, "periods_ms": [], "first_ms": None,
                  "last_ms": None}}


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
        for key in [key for key in KEYS[2:] if key != "bytes"]:
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


def test_usage_is_summarised_and_simkube_traces_have_none(samples: Path,
                                                          tmp_path: Path) -> None:
    write_trace(usage_trace(), tmp_path / "u.trace")
    info = summarise(open_trace(tmp_path / "u.trace")).to_json()
    assert info["usage"] == {"workloads": 2, "samples": 5, "periods_ms": [15_000],
                             "first_ms": 0, "last_ms": 45_000}
    simkube = summarise(open_trace(samples / "dsb-scaling.sktrace")).to_json()
    assert simkube["usage"] == {"workloads": 0, "samples": 0, "periods_ms": [],
                                "first_ms": None, "last_ms": None}


def test_malformed_usage_is_still_counted() -> None:
    record = RecordedUsage(kind="v1.Pod", workload="a/b", period_ms="x",
                           rows=("junk", [5, 1, 1, 1], [None, 1, 1, 1]))
    assert summarise_usage([record]).to_json() == {
        "workloads": 1, "samples": 3, "periods_ms": [], "first_ms": 5, "last_ms": 5}
