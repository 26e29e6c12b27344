from __future__ import annotations

import pytest

from benchmarks import trace_format

pytestmark = pytest.mark.unit


def test_synthetic_events_are_realistic_and_time_ordered() -> None:
    events = list(trace_format.synthetic_events(400))
    assert [e.ts_ms for e in events] == sorted(e.ts_ms for e in events)
    kinds = {obj["kind"] for event in events for obj in event.applied + event.deleted}
    assert kinds == {"Deployment", "Pod"}
    assert any(event.deleted for event in events)


def test_benchmark_prints_every_figure_for_both_formats(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace_format, "MIN_TIMED_SECONDS", 0.0)  # one run per figure
    figures = {figure["benchmark"]: figure for figure in trace_format.run(
        synthetic=1500, usage_events=300, usage_samples=20)}
    for name in ("dsb-scaling", "synthetic-1500"):
        for fmt in ("native", "simkube-v2"):
            for key in ("bytes", "write_events_per_s", "read_events_per_s"):
                assert figures[f"trace_format.{name}.{fmt}.{key}"]["value"] > 0
        ratio = figures[f"trace_format.{name}.bytes_ratio_native_to_simkube"]
        assert ratio["met"] is True
    assert figures["trace_format.dsb-scaling.native.events"]["value"] == 19
    usage = "trace_format.usage-300x500x20"
    assert figures[f"{usage}.samples"]["value"] == 500 * 20
    assert figures[f"{usage}.bytes_with"]["value"] > figures[f"{usage}.bytes_without"]["value"]
    assert figures[f"{usage}.check_samples_per_s"]["value"] > 0


def test_synthetic_usage_is_valid_and_follows_the_deployments() -> None:
    usage = trace_format.synthetic_usage(workloads=3, samples=4)
    assert [series.workload for series in usage] == ["team-00/svc-000", "team-01/svc-001",
                                                     "team-02/svc-002"]
    assert [s.t_ms for s in usage[0].samples] == [0, 15_000, 30_000, 45_000]
