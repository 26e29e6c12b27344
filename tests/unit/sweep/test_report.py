"""The sweep report from synthetic results directories (summaries by the recorder's writer)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from simkube.core.errors import ConfigError
from simkube.skctl.main import cli
from simkube.sweep import manifest
from simkube.sweep.manifest import PointState
from simkube.sweep.points import build_points
from simkube.sweep.report import make_report
from simkube.sweep.running import prepare
from simkube.sweep.spec import load_sweep
from tests.unit.sweep.files import write_sweep
from tests.unit.sweep.results import write_run

pytestmark = pytest.mark.unit
# point: (cost, node hours, p90) for run-1 and run-2
FIGURES = {0: [(4.0, 8.0, 10.0), (4.2, 8.0, 12.0)],   # cheap-ish, fast
           1: [(2.0, 6.0, 30.0), (2.0, 6.0, 30.0)],   # cheapest, slow
           2: [(5.0, 9.0, 11.0), (5.0, 9.0, 13.0)],   # dominated by 0 on both pairs
           3: [(1.0, 1.0, None), (1.0, 1.0, None)]}   # no pod scheduled: no p90


def _sweep_dir(tmp_path: Path) -> Path:
    sweep = load_sweep(write_sweep(tmp_path, axes=[
        {"caFlag": "--expander", "values": ["least-waste", "price", "random", "most-pods"]},
        {"traceEdit": "replicas", "values": [1, 2]}],
        sampling={"method": "random", "points": 5, "seed": 3}))
    points = build_points(sweep)
    output = tmp_path / "out"
    prepare(sweep, points, output=output)
    for index, runs in FIGURES.items():
        for number, (cost, hours, p90) in enumerate(runs, start=1):
            write_run(output / "points" / str(index) / f"run-{number}", cost=cost,
                      node_hours=hours, p90=p90)
        manifest.update(output, index, state=PointState.DONE, results=f"points/{index}")
    manifest.update(output, 4, state=PointState.FAILED, reason="CA did not start")
    return output


def test_the_report_json_has_every_point_its_means_spread_and_frontiers(tmp_path: Path) -> None:
    output = _sweep_dir(tmp_path)
    data = make_report(output).data
    points = {point["index"]: point for point in data["points"]}
    assert sorted(points) == [0, 1, 2, 3, 4]
    assert points[0]["means"]["cost_usd"] == pytest.approx(4.1)
    assert points[0]["means"]["pending_p90_s"] == pytest.approx(11.0)
    assert points[0]["spread"]["cost_usd"] == pytest.approx(0.2)
    assert points[0]["spread"]["pending_p90_s"] == pytest.approx(2.0)
    assert points[0]["means"]["never_scheduled"] == 0
    assert len(points[0]["runs"]) == 2
    assert points[3]["means"]["pending_p90_s"] is None
    assert (points[4]["state"], points[4]["reason"], points[4]["runs"]) == (
        "failed", "CA did not start", [])
    cost = data["frontiers"]["cost_usd/pending_p90_s"]
    assert (cost["front"], cost["dominated"], cost["excluded"]) == ([1, 0], [2], [3])
    assert cost["notes"] == ["point 3 left out of the cost_usd / pending_p90_s frontier: "
                             "no pending_p90_s"]
    hours = data["frontiers"]["node_hours/pending_p90_s"]
    assert (hours["front"], hours["dominated"]) == ([1, 0], [2])


def test_the_report_writes_plots_and_a_page_embedding_them(tmp_path: Path) -> None:
    output = _sweep_dir(tmp_path)
    report = make_report(output)
    assert sorted(report.data["plots"]) == ["cost_usd-vs-pending_p90_s",
                                            "node_hours-vs-pending_p90_s"]
    for path in report.data["plots"].values():
        assert Path(path).read_bytes().startswith(b"\x89PNG")
    page = report.html.read_text()
    assert page.count("data:image/png;base64,") == 2
    assert "CA did not start" in page
    assert report.html == output / "report" / "index.html"


def test_skctl_sweep_report_json(tmp_path: Path) -> None:
    output = _sweep_dir(tmp_path)
    result = CliRunner().invoke(cli, ["sweep", "report", str(output), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["frontiers"]["cost_usd/pending_p90_s"]["front"] == [1, 0]


def test_a_directory_without_a_manifest_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"has no manifest\.json: not a sweep's output"):
        make_report(tmp_path)


def test_a_sweep_with_nothing_measured_yet_still_reports(tmp_path: Path) -> None:
    sweep = load_sweep(write_sweep(tmp_path, axes=[{"traceEdit": "replicas",
                                                    "values": [1, 2]}]))
    prepare(sweep, build_points(sweep), output=tmp_path / "out")
    report = make_report(tmp_path / "out")
    assert report.plots == []
    assert report.data["headlines"][0] == "2 pending"
