"""A Cluster Autoscaler run and a Karpenter run in reports: the same metrics read for both,
the breakdown per instance type and NodePool, removals by why, and the differences named."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from simkube.report import load
from simkube.report.compare import compare_runs
from simkube.report.metrics import metric_values
from simkube.report.render import make_comparison, make_report
from simkube.report.tables import compare_grid, report_grid
from tests.unit.report.known_run import write_run

pytestmark = pytest.mark.unit
CA: dict[str, Any] = {
    "autoscaler": "cluster-autoscaler", "disruptions": {"Empty": 1, "Underutilized": 1},
    "groups": {"general": {"instance_type": "m5.large"},
               "spot": {"instance_type": "m5.2xlarge"}},
    "instance_types": {"m5.2xlarge": {"node_hours": 6.0, "cost_usd": 1.5},
                       "m5.large": {"node_hours": 4.0, "cost_usd": 2.0}},
    "node_pools": {"general": {"node_hours": 4.0, "cost_usd": 2.0},
                   "spot": {"node_hours": 6.0, "cost_usd": 1.5}}}
KARPENTER: dict[str, Any] = {
    "autoscaler": "karpenter", "disruptions": {"Underutilized": 2}, "cost_usd": 1.92,
    "instance_types": {"m5.2xlarge": {"node_hours": 5.0, "cost_usd": 1.92}},
    "node_pools": {"simkube": {"node_hours": 5.0, "cost_usd": 1.92}}}


def test_the_breakdown_is_read_the_same_for_both(tmp_path: Path) -> None:
    ca = load(write_run(tmp_path, simulation="ca", summary=CA))
    karpenter = load(write_run(tmp_path, simulation="karpenter", summary=KARPENTER))
    assert (ca.title, karpenter.title) == ("ca/run-1 (cluster-autoscaler)", "karpenter/run-1")
    values = metric_values(karpenter)
    assert values["instance_types.m5.2xlarge.node_hours"] == 5.0
    assert values["node_pools.simkube.cost_usd"] == 1.92
    assert values["disruptions.Underutilized"] == 2
    comparison = compare_runs([ca, karpenter])
    by_key = {row.metric.key: row.values for row in comparison.rows}
    # what a run did not use is zero; a pool is an autoscaler's own name, not comparable
    assert by_key["instance_types.m5.large.node_hours"] == [4.0, 0.0]
    assert by_key["disruptions.Empty"] == [1.0, 0.0]
    assert by_key["node_pools.general.node_hours"] == [4.0, None]
    assert by_key["node_pools.simkube.node_hours"] == [None, 5.0]
    keys = [callout.key for callout in comparison.callouts]
    assert keys[0] == "autoscaler"
    assert comparison.callouts[0].text == (
        "autoscaler: cluster-autoscaler → karpenter (ca/run-1 → karpenter/run-1)")
    assert {"instance_types.m5.large.node_hours", "disruptions.Empty",
            "disruptions.Underutilized", "cost_usd"} <= set(keys)
    assert not any(key.startswith("node_pools.") for key in keys)
    texts = {callout.key: callout.text for callout in comparison.callouts}
    assert texts["disruptions.Empty"] == (
        "nodes removed: Empty: 1 → 0 in karpenter/run-1 (-1, -100.0%)")


def test_tables_and_headlines_name_the_autoscaler(tmp_path: Path) -> None:
    ca = load(write_run(tmp_path, simulation="ca", summary=CA))
    karpenter = load(write_run(tmp_path, simulation="karpenter", summary=KARPENTER))
    grid = compare_grid(compare_runs([ca, karpenter]))
    assert grid.sections[0] == ("run", [["autoscaler", "cluster-autoscaler", "karpenter", "",
                                         "differs"]])
    assert (0, 0) in grid.highlighted
    single = report_grid([karpenter])
    assert single.sections[0] == ("run", [["autoscaler", "karpenter"]])
    lines = make_report([ca], output=tmp_path / "ca-report").headlines
    assert lines[0].startswith("ca/run-1 (cluster-autoscaler): Finished")
    assert "autoscaler: cluster-autoscaler; nodes removed: 2 (Empty 1, Underutilized 1)" in lines
    assert ("node hours by instance type: m5.2xlarge 6.00 h ($1.50), "
            "m5.large 4.00 h ($2.00)") in lines
    assert "node hours by NodePool: general 4.00 h ($2.00), spot 6.00 h ($1.50)" in lines


def test_pages_and_plots_carry_the_breakdown(tmp_path: Path) -> None:
    ca = load(write_run(tmp_path, simulation="ca", summary=CA))
    karpenter = load(write_run(tmp_path, simulation="karpenter", summary=KARPENTER))
    rendered = make_comparison([ca, karpenter], output=tmp_path / "cmp")
    assert [plot.name for plot in rendered.plots] == [
        "nodes", "pods", "pending", "cost", "breakdown"]
    assert rendered.plots[-1].png.startswith(b"\x89PNG")
    page = rendered.html.read_text()
    assert page.count("data:image/png;base64,") == 5
    for text in ("instance type m5.large: node hours", "NodePool simkube: cost",
                 "nodes removed: Underutilized", "autoscaler: cluster-autoscaler → karpenter"):
        assert text in page
    assert [run["autoscaler"] for run in rendered.data["runs"]] == [
        "cluster-autoscaler", "karpenter"]
    # the study labels its runs by autoscaler: the callout does not say it twice
    study = compare_runs([load(ca.directory, label="cluster-autoscaler"),
                          load(karpenter.directory, label="karpenter")])
    assert study.callouts[0].text == "autoscaler: cluster-autoscaler → karpenter"


def test_runs_from_before_the_breakdown_show_none_of_it(tmp_path: Path) -> None:
    old = load(write_run(tmp_path, simulation="old"))
    karpenter = load(write_run(tmp_path, simulation="karpenter", summary=KARPENTER))
    assert old.title == "old/run-1"
    comparison = compare_runs([old, karpenter])
    by_key = {row.metric.key: row.values for row in comparison.rows}
    assert by_key["instance_types.m5.2xlarge.node_hours"] == [None, 5.0]
    assert by_key["disruptions.Underutilized"] == [None, 2.0]
    assert "autoscaler" not in [callout.key for callout in comparison.callouts]
    grid = compare_grid(comparison)
    assert grid.sections[0] == ("run", [["autoscaler", "-", "karpenter", "", "differs"]])
    rendered = make_report([old], output=tmp_path / "old-report")
    assert [plot.name for plot in rendered.plots] == ["nodes", "pods", "pending", "cost"]
    assert not any(line.startswith("autoscaler:") for line in rendered.headlines)
