from __future__ import annotations

import struct
from pathlib import Path

import pytest

from simkube.report import load
from simkube.report.compare import compare_runs
from simkube.report.metrics import format_value, metric_values
from simkube.report.render import make_comparison, make_report
from tests.unit.report.known_run import scaled_timeline, write_run

pytestmark = pytest.mark.unit
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def assert_png(path: Path) -> None:
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC), path
    width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk
    assert (width, height) == (900, 480), path
    assert 5_000 < len(data) < 500_000, (path, len(data))


def test_metrics_of_the_known_run(tmp_path: Path) -> None:
    run = load(write_run(tmp_path))
    assert run.label == "shop/run-1"
    assert run.groups == ("general", "spot")
    assert run.timeline["nodes.spot"] == [1, 1, 1, 2, 2, 1]
    assert sorted(run.pending_s) == [0.5, 1.5, 2.0, 10.0]
    values = metric_values(run)
    assert values["groups.general.cost_usd"] == 2.0
    assert values["groups.spot.node_hours"] == 6.0
    assert values["nodes.peak_total"] == 4  # from the timeline
    assert values["cost_usd"] == 3.5
    assert values["pods.never_scheduled"] == 1
    assert values["pods.pending_p90_s"] == 10.0
    assert values["driver.objects_failed"] == 2
    assert values["trace_seconds"] == 50.0


@pytest.mark.parametrize(("value", "kind", "text"), [
    (3.5, "usd", "$3.50"), (1234.5, "usd", "$1,234.50"), (10.0, "hours", "10.00 h"),
    (1.25, "seconds", "1.2 s"), (4.0, "count", "4"), (2.5, "count", "2.50"),
    (None, "count", "-"), (3.5, "ms", "3.5 ms"),
])
def test_formatting(value: float | None, kind: str, text: str) -> None:
    assert format_value(value, kind=kind) == text


def test_report_writes_pngs_and_a_self_contained_page(tmp_path: Path) -> None:
    run = load(write_run(tmp_path))
    rendered = make_report([run], output=tmp_path / "out")
    assert [plot.name for plot in rendered.plots] == ["nodes", "pods", "pending", "cost"]
    for plot in rendered.plots:
        assert_png(plot.path)
    page = rendered.html.read_text()
    assert rendered.html == tmp_path / "out" / "index.html"
    assert page.count("data:image/png;base64,") == 4
    for text in ("$3.50", "$2.00", "10.00 h", "pods never scheduled", "shop/run-1"):
        assert text in page
    assert rendered.headlines[1] == "peak nodes 4 (general 2, spot 2)"
    assert rendered.headlines[2] == "cost $3.50 for 10.00 h of nodes"
    assert rendered.data["html"] == str(rendered.html)


def test_comparison_calls_out_what_moved(tmp_path: Path) -> None:
    first = load(write_run(tmp_path, run=1))
    second = load(write_run(tmp_path, run=2, timeline=scaled_timeline(nodes=2, cost=1.04),
                            summary={"cost_usd": 3.6, "pods": {"pending_max_s": 12.0}}))
    comparison = compare_runs([first, second], threshold=0.05)
    by_key = {row.metric.key: row for row in comparison.rows}
    assert by_key["cost_usd"].absolute == [None, pytest.approx(0.1)]
    assert by_key["cost_usd"].relative == [None, pytest.approx(0.1 / 3.5)]
    assert by_key["pods.pending_max_s"].relative == [None, pytest.approx(0.2)]
    keys = [callout.key for callout in comparison.callouts]
    # Cost moved by 2.9% (below 5%); the node curves and peak doubled; max pending +20%.
    assert keys == ["nodes.peak_total", "pods.pending_max_s", "curve.nodes_total",
                    "curve.nodes.general", "curve.nodes.spot"]
    texts = [callout.text for callout in comparison.callouts]
    assert texts[0] == "all groups: peak nodes: 4 → 8 in shop/run-2 (+4, +100.0%)"
    assert texts[1] == "time pending max: 10.0 s → 12.0 s in shop/run-2 (+2.0 s, +20.0%)"
    curves = {diff.column: diff for _label, diff in comparison.curves}
    assert curves["nodes_total"].relative == pytest.approx(1.0)
    assert curves["cost_usd"].relative == pytest.approx(0.04)
    assert curves["pods_running"].relative == 0
    loose = compare_runs([first, second], threshold=1.5)
    assert loose.callouts == []


def test_comparison_page(tmp_path: Path) -> None:
    first = load(write_run(tmp_path, run=1))
    second = load(write_run(tmp_path, run=2, summary={"autoscaler_events": 3}))
    rendered = make_comparison([first, second], output=tmp_path / "cmp", threshold=0.05)
    page = rendered.html.read_text()
    assert rendered.html.name == "compare.html"
    assert page.count("data:image/png;base64,") == 4
    assert "autoscaler events: 0 → 3 in shop/run-2 (+3, new)" in page
    assert 'class=differs' in page
    for plot in rendered.plots:
        assert_png(plot.path)
    difference = rendered.data["differences"][0]
    assert difference["key"] == "autoscaler_events"
    assert difference["relative"] is None  # infinite: JSON has no infinity


def test_pods_that_never_ran_are_not_hidden_by_fast_percentiles(tmp_path: Path) -> None:
    older = load(write_run(tmp_path, run=1))  # a summary from before the fields existed
    assert metric_values(older)["pods.unscheduled_wait_max_s"] is None
    assert not any("never scheduled ones" in line
                   for line in make_report([older], output=tmp_path / "a").headlines)
    starved = load(write_run(tmp_path, run=2, summary={"pods": {
        "unscheduled_wait_p50_s": 30.0, "unscheduled_wait_max_s": 45.0}}))
    rendered = make_report([starved], output=tmp_path / "b")
    assert rendered.headlines[4] == ("time pending of scheduled pods: p50 1.5 s, p99 10.0 s, "
                                     "max 10.0 s; never scheduled ones waited up to 45.0 s")
    page = rendered.html.read_text()
    assert "never scheduled: waited max" in page
    assert "45.0 s" in page


def test_the_runs_timers_and_their_floors_are_named(tmp_path: Path) -> None:
    untimed = make_report([load(write_run(tmp_path, run=1))], output=tmp_path / "a")
    assert not any("timers" in line for line in untimed.headlines)
    floored = {"timer": "scheduler.podInitialBackoffSeconds", "traceTime": "1.0s",
               "wallTime": "1.0s", "effectiveTraceTime": "30.0s", "floored": True}
    exact = {"timer": "clusterAutoscaler.scan-interval", "traceTime": "10.0s",
             "wallTime": "333ms", "effectiveTraceTime": "10.0s", "floored": False}
    timed = load(write_run(tmp_path, run=2, summary={"timers": {
        "appliedTo": "local environment 'e'", "values": [exact, floored],
        "warnings": ["at speed 30, scheduler.podInitialBackoffSeconds 1.0s is 30.0s"]}}))
    lines = make_report([timed], output=tmp_path / "b").headlines
    assert "timers ÷ speed applied to: local environment 'e'" in lines
    assert ("effective: scheduler.podInitialBackoffSeconds asked 1.0s of trace time, is 30.0s "
            "(wall 1.0s)") in lines
    assert "WARNING: at speed 30, scheduler.podInitialBackoffSeconds 1.0s is 30.0s" in lines
    assert not any("scan-interval" in line for line in lines)
