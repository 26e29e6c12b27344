from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from simkube.skctl.report_commands import compare_command, report_command
from tests.conftest import skctl
from tests.unit.report.known_run import scaled_timeline, write_run

pytestmark = pytest.mark.unit


def _json(command: click.Command, *args: str) -> Any:
    result = CliRunner().invoke(command, [*args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_report_json_has_the_exact_numbers(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path)
    data = _json(report_command, "shop", "--results", str(tmp_path))
    assert data["html"] == str(run_dir / "report" / "index.html")
    (run,) = data["runs"]
    assert run["label"] == "shop/run-1"
    assert run["state"] == "Finished"
    metrics = run["metrics"]
    assert metrics["groups.general.peak_nodes"] == 2
    assert metrics["groups.spot.cost_usd"] == 1.5
    assert metrics["nodes.peak_total"] == 4
    assert metrics["node_hours"] == 10.0
    assert metrics["pods.seen"] == 5
    assert metrics["pods.pending_p50_s"] == 1.5
    assert metrics["driver.events_applied"] == 120
    assert metrics["wall_seconds"] == 5.0
    assert data["headlines"][3] == "pods: 5 seen, 4 scheduled, 1 never scheduled"
    assert sorted(data["plots"]) == ["cost", "nodes", "pending", "pods"]
    for path in data["plots"].values():
        assert Path(path).read_bytes().startswith(b"\x89PNG")


def test_report_table_on_the_terminal(tmp_path: Path) -> None:
    write_run(tmp_path)
    result = CliRunner().invoke(report_command, ["shop/run-1", "--results", str(tmp_path)],
                                catch_exceptions=False, terminal_width=120)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert any("all groups: cost" in line and "$3.50" in line for line in lines)
    assert any("time pending p99" in line and "10.0 s" in line for line in lines)
    assert f"report: {tmp_path}/shop/run-1/report/index.html" in lines


def test_report_all_overlays_the_repetitions(tmp_path: Path) -> None:
    write_run(tmp_path, run=1)
    write_run(tmp_path, run=2, summary={"cost_usd": 4.0})
    out = tmp_path / "elsewhere"
    data = _json(report_command, "shop", "--all", "--results", str(tmp_path / "shop"),
                 "--output", str(out))
    assert [run["metrics"]["cost_usd"] for run in data["runs"]] == [3.5, 4.0]
    assert data["html"] == str(out / "index.html")
    latest = _json(report_command, "shop", "--results", str(tmp_path))
    assert latest["runs"][0]["label"] == "shop/run-2"


def test_compare_json_and_callouts(tmp_path: Path) -> None:
    write_run(tmp_path, run=1)
    write_run(tmp_path, simulation="shop-fix", run=1,
              timeline=scaled_timeline(nodes=2, cost=2), summary={"cost_usd": 7.0})
    data = _json(compare_command, "shop/run-1", "shop-fix", "--results", str(tmp_path),
                 "--threshold", "10")
    assert data["threshold"] == 0.1
    assert data["html"] == str(tmp_path / "shop" / "compare" /
                               "shop-run-1_vs_shop-fix-run-1" / "compare.html")
    cost = next(m for m in data["metrics"] if m["key"] == "cost_usd")
    assert cost["values"] == [3.5, 7.0]
    assert cost["absolute"] == [None, 3.5]
    assert cost["relative"] == [None, 1.0]
    called = [(d["key"], d["relative"]) for d in data["differences"]]
    assert ("cost_usd", 1.0) in called
    assert ("curve.nodes_total", 1.0) in called
    assert ("curve.pods_running", 0.0) not in called
    table = CliRunner().invoke(compare_command, ["shop", "shop-fix", "--results", str(tmp_path)],
                               catch_exceptions=False, terminal_width=160)
    assert "all groups: cost: $3.50 → $7.00 in shop-fix/run-1 (+$3.50, +100.0%)" in table.stdout
    assert "compare.html" in table.stdout


def _fails(*args: str) -> str:
    result = skctl(*args, check=False)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    return result.stderr


def test_errors_exit_2_with_a_message(tmp_path: Path) -> None:
    write_run(tmp_path)
    results = str(tmp_path)
    assert "no results of simulation 'cart'" in _fails("report", "cart", "--results", results)
    assert "has no run 4" in _fails("report", "shop", "--run", "4", "--results", results)
    assert "exclude each other" in _fails("report", "shop", "--run", "1", "--all",
                                          "--results", results)
    assert "needs at least two runs" in _fails("compare", "shop", "--results", results)
    assert "not a run reference" in _fails("compare", "shop", "Bad/x", "--results", results)
    missing = str(tmp_path / "nothing-here")
    assert "no results of simulation 'shop'" in _fails("report", "shop", "--results", missing)


def test_corrupt_results_exit_2(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path)
    timeline = run_dir / "timeline.csv"
    timeline.write_text(timeline.read_text().replace("0,0,0,0,0,0,2,1,1,0", "0,zero,0"))
    assert "timeline.csv" in _fails("report", "shop", "--results", str(tmp_path))
    timeline.write_text("")
    assert "timeline.csv" in _fails("report", "shop", "--results", str(tmp_path))
    write_run(tmp_path, run=2)
    write_run(tmp_path, run=3)
    (tmp_path / "shop" / "run-3" / "summary.json").write_text("{not json")
    message = _fails("compare", "shop/run-2", "shop/run-3", "--results", str(tmp_path))
    assert message.startswith(f"error: unreadable results: {tmp_path}/shop/run-3/summary.json")
