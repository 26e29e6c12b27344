"""The HPA's replicas in reports and comparisons (summary's hpas, hpas.csv)."""

from __future__ import annotations

from pathlib import Path

import pytest

from simkube.report import load
from simkube.report.compare import compare_runs
from simkube.report.metrics import headlines, metric_values
from simkube.report.render import make_report
from tests.unit.report.known_run import write_run

pytestmark = pytest.mark.unit

HPA_SUMMARY = {"scale_events": 2, "scale_ups": 1, "scale_downs": 1, "peak_desired": 4,
               "min_desired": 1, "final_desired": 2, "mean_desired": 2.5, "mean_current": 2.2}


def _run(root: Path, *, run: int, desired: list[tuple[float, int]], mean: float) -> Path:
    run_dir = write_run(root, run=run, summary={"hpas": {"shop/web": {**HPA_SUMMARY,
                                                                       "mean_desired": mean}}})
    lines = ["wall_s,trace_s,hpa,desired,current", "0,0,shop/web,0,0"]
    lines += [f"{t / 10},{t},shop/web,{d},{d}" for t, d in desired]
    (run_dir / "hpas.csv").write_text("\n".join(lines) + "\n")
    return run_dir


def test_hpa_curves_start_at_the_first_decision_and_hold_to_the_run_end(tmp_path: Path) -> None:
    run = load(_run(tmp_path, run=1, desired=[(10, 1), (30, 4)], mean=2.5))
    assert run.hpas == {"shop/web": {"trace_s": [10.0, 30.0, 50.0], "desired": [1.0, 4.0, 4.0],
                                     "current": [1.0, 4.0, 4.0]}}
    values = metric_values(run)
    assert values["hpas.shop/web.mean_desired"] == 2.5
    assert values["hpas.shop/web.scale_events"] == 2
    assert "HPA shop/web: replicas mean 2.50, peak 4; 2 scale events (1 up, 1 down)" in \
        headlines(run)


def test_a_comparison_calls_out_the_hpa_replica_curve(tmp_path: Path) -> None:
    first = load(_run(tmp_path, run=1, desired=[(10, 1), (30, 4)], mean=2.5))
    second = load(_run(tmp_path, run=2, desired=[(10, 1), (30, 2)], mean=1.5))
    comparison = compare_runs([first, second], threshold=0.05)
    curves = {diff.column: diff for _label, diff in comparison.curves}
    # desired 1 then 4 against 1 then 2 over trace 10-50 s: |Δ| 2 for 20 of 40 s
    assert curves["hpa.shop/web"].relative == pytest.approx(1.0 / ((20 + 80) / 40))
    keys = [callout.key for callout in comparison.callouts]
    assert "hpas.shop/web.mean_desired" in keys
    assert "curve.hpa.shop/web" in keys
    texts = [c.text for c in comparison.callouts if c.key == "curve.hpa.shop/web"]
    assert texts[0].startswith("HPA shop/web desired replicas over trace time")


def test_the_report_draws_the_hpa_plot_only_for_runs_with_hpas(tmp_path: Path) -> None:
    with_hpa = load(_run(tmp_path, run=1, desired=[(10, 1), (30, 4)], mean=2.5))
    assert "hpa" in [p.name for p in make_report([with_hpa], output=tmp_path / "a").plots]
    without = load(write_run(tmp_path, run=2))
    assert without.hpas == {}
    assert "hpa" not in [p.name for p in make_report([without], output=tmp_path / "b").plots]
