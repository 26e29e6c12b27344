"""``skctl check`` end to end on small results directories: verdicts, outputs, exit codes."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import click
import pytest
import yaml
from click.testing import CliRunner

from simkube.core.errors import SimkubeError
from simkube.skctl import check_commands, sim_commands
from simkube.skctl.check_commands import check_command
from tests.conftest import skctl
from tests.unit.check.runs import write_run

pytestmark = pytest.mark.unit


def _check(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Exit code and stdout, as ``core.cli.run_command`` would exit."""
    result = CliRunner().invoke(check_command, list(args), standalone_mode=False, env=env)
    error = result.exception
    if isinstance(error, SimkubeError):
        return error.exit_code, str(error)
    if isinstance(error, click.ClickException):
        return error.exit_code, error.format_message()
    assert error is None, error
    return result.return_value or 0, result.stdout


def _runs(root: Path, name: str, *hours: float) -> Path:
    for number, value in enumerate(hours, start=1):
        write_run(root, simulation=name, run=number, node_hours=value,
                  cost_usd=value / 2)
    return root / name


def test_the_same_figures_pass_and_a_rise_exits_1(tmp_path: Path) -> None:
    base = _runs(tmp_path, "base", 8.0)
    same = _runs(tmp_path, "same", 8.0)
    code, out = _check(str(same), "--baseline", str(base))
    assert code == 0, out
    assert "PASS" in out
    slow = _runs(tmp_path, "slow", 10.0)
    code, out = _check(str(slow / "run-1"), "--baseline", str(base / "run-1"))
    assert code == 1
    assert "REGRESSION: slow/run-1 against base/run-1: cost +$1.000 (+25.0%), node hours " \
           "+2.000 h (+25.0%)" in out


def test_repetitions_widen_the_band(tmp_path: Path) -> None:
    base = _runs(tmp_path, "base", 8.0, 10.0, 9.0)
    assert _check(str(_runs(tmp_path, "a", 10.2)), "--baseline", str(base))[0] == 0
    assert _check(str(_runs(tmp_path, "b", 10.4)), "--baseline", str(base))[0] == 1


def test_markdown_is_printed_and_appended_to_the_step_summary(tmp_path: Path) -> None:
    base, slow = _runs(tmp_path, "base", 8.0), _runs(tmp_path, "slow", 10.0)
    summary = tmp_path / "step-summary.md"
    summary.write_text("earlier step\n")
    code, out = _check(str(slow), "--baseline", str(base), "--markdown",
                       env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert code == 1
    assert out.startswith("### ❌ skctl check: REGRESSION")
    assert summary.read_text() == "earlier step\n" + out + "\n"
    code, out = _check(str(slow), "--baseline", str(base), "--markdown",
                       env={"GITHUB_STEP_SUMMARY": ""})
    assert code == 1


def test_junit_and_json(tmp_path: Path) -> None:
    base, slow = _runs(tmp_path, "base", 8.0), _runs(tmp_path, "slow", 10.0)
    report = tmp_path / "junit.xml"
    code, out = _check(str(slow), "--baseline", str(base), "--junit", str(report), "--json")
    assert code == 1
    data = json.loads(out)
    assert [f["figure"] for f in data["figures"] if f["verdict"] == "regression"] == [
        "cost_usd", "node_hours"]
    suite = ET.parse(report).getroot().find("testsuite")  # noqa: S314  # our own file
    assert suite is not None
    assert suite.get("failures") == "2"


def test_a_written_baseline_is_checked_against_like_its_runs(tmp_path: Path) -> None:
    base = _runs(tmp_path, "base", 8.0, 10.0)
    figures = tmp_path / "baseline.yaml"
    code, out = _check(str(base), "--write-baseline", str(figures))
    assert code == 0, out
    assert yaml.safe_load(figures.read_text())["figures"]["node_hours"]["max"] == 10.0
    slow = _runs(tmp_path, "slow", 10.6)
    assert _check(str(slow), "--baseline", str(figures)) == _check(
        str(slow), "--baseline", str(base))


def test_a_simulation_name_is_found_in_the_local_environment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIMKUBE_HOME", str(tmp_path))
    results = tmp_path / "results" / "ci"
    _runs(results, "base", 8.0, 9.0)
    _runs(results, "fix", 8.5)
    code, out = _check("fix", "--baseline", "base", "--env", "ci", "--json")
    assert code == 0, out
    assert json.loads(out)["baseline"]["provenance"]["runs"] == [1, 2]
    code, out = _check("fix/run-1", "--baseline", "base/run-2", "--env", "ci", "--json")
    assert json.loads(out)["baseline"]["label"] == "base/run-2"


def test_a_trace_is_replayed_through_skctl_runs_code(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIMKUBE_HOME", str(tmp_path))
    base = _runs(tmp_path, "base", 8.0)
    trace = Path(__file__).parents[2] / "data" / "simkube" / "cronjob.sktrace"
    created: list[dict[str, Any]] = []

    def create(simulation: dict[str, Any], **options: Any) -> dict[str, Any]:
        assert options["wait"] is True
        assert options["details"].stderr  # stdout is the verdict only
        created.append(simulation)
        _runs(tmp_path / "results" / "ci", simulation["metadata"]["name"], 8.1, 8.2)
        return simulation

    monkeypatch.setattr(sim_commands, "create_simulation", create)
    code, out = _check("--trace", str(trace), "--env", "ci", "--speed", "10",
                       "--repetitions", "2", "--name", "now", "--baseline", str(base), "--json")
    assert code == 0, out
    (simulation,) = created
    assert simulation["spec"]["repetitions"] == 2
    assert json.loads(out)["candidate"]["provenance"]["runs"] == [1, 2]


@pytest.mark.parametrize(("args", "message"), [
    ((), "CANDIDATE) or --trace"),
    (("x", "--baseline", "y", "--write-baseline", "z"), "exclude each other"),
    (("x",), "give --baseline"),
    (("x", "--baseline", "y", "--json", "--markdown"), "exclude each other"),
    (("x", "--baseline", "y", "--speed", "10"), "go with --trace"),
])
def test_usage_errors(args: tuple[str, ...], message: str) -> None:
    code, text = _check(*args)
    assert code == 2
    assert message in text


def test_bad_input_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    base, slow = _runs(tmp_path, "base", 8.0), _runs(tmp_path, "slow", 10.0)
    bad = tmp_path / "thresholds.yaml"
    bad.write_text("version: 1\nfigures: {node_hours: {relative: lots}}\n")
    report = tmp_path / "junit.xml"
    code, text = _check(str(slow), "--baseline", str(base), "--thresholds", str(bad),
                        "--junit", str(report))
    assert code == 2
    assert "figures.node_hours.relative is 'lots', not a number" in text
    assert not report.exists()
    code, text = _check(str(slow), "--baseline", str(tmp_path))
    assert code == 2
    assert "neither a run directory" in text
    code, text = _check(str(slow), "--baseline", str(bad))
    assert (code, "not a baseline file" in text) == (2, True)
    code, text = _check(str(bad), "--baseline", str(base))
    assert (code, "only --baseline may be a baseline file" in text) == (2, True)


def test_the_installed_command_exits_with_the_codes(tmp_path: Path) -> None:
    base, slow = _runs(tmp_path, "base", 8.0), _runs(tmp_path, "slow", 10.0)
    assert skctl("check", str(base), "--baseline", str(base), check=False).returncode == 0
    failed = skctl("check", str(slow), "--baseline", str(base), check=False)
    assert failed.returncode == 1, failed.stderr
    assert "node hours" in failed.stdout
    assert "regression" in failed.stdout
    missing = skctl("check", str(slow), "--baseline", str(tmp_path / "nope"), check=False)
    assert missing.returncode == 2
    assert "Traceback" not in missing.stderr
    assert check_commands.EXIT_REGRESSION == 1


def test_a_failed_replay_exits_2_not_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def create(simulation: dict[str, Any], **_options: Any) -> dict[str, Any]:
        raise sim_commands.SimulationFailedError("simulation 'now' ended Failed: boom")

    monkeypatch.setattr(sim_commands, "create_simulation", create)
    trace = Path(__file__).parents[2] / "data" / "simkube" / "cronjob.sktrace"
    code, text = _check("--trace", str(trace), "--baseline", str(_runs(tmp_path, "b", 8.0)))
    assert (code, "ended Failed: boom" in text) == (2, True)
