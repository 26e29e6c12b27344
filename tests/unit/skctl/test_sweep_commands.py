from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from simkube.core.errors import ConfigError
from simkube.skctl import sweep_cluster, sweep_commands, sweep_local
from simkube.skctl.main import cli
from simkube.sweep.estimate import RUN_OVERHEAD_S
from tests.unit.sweep.files import write_sweep

pytestmark = pytest.mark.unit
AXES = [{"caFlag": "--expander", "values": ["least-waste,price", "price", "random"]}]


def test_plan_json_lists_every_point_and_the_estimate(tmp_path: Path) -> None:
    path = write_sweep(tmp_path, axes=AXES)
    result = CliRunner().invoke(cli, ["sweep", "plan", str(path), "--parallel", "2", "--json"])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.output)
    one = 2 * 600 / 10 + RUN_OVERHEAD_S  # two runs of 10m at 10x, and the overhead
    assert [p["differs"] for p in plan["points"]] == [[], ["--expander=price"],
                                                      ["--expander=random"]]
    assert plan["points"][1]["estimate_s"] == pytest.approx(one)
    assert plan["estimate_s"] == pytest.approx(2 * one)  # three points on two workers


def test_plan_names_the_file_when_a_point_cannot_be_built(tmp_path: Path) -> None:
    path = write_sweep(tmp_path, axes=[{"autoscaler": ["karpenter"]}, *AXES])
    result = CliRunner().invoke(cli, ["sweep", "plan", str(path)])
    assert isinstance(result.exception, ConfigError)  # skctl's main makes it exit code 2
    assert result.exception.message == (
        f"{path}: point 0 (autoscaler=karpenter, --expander=least-waste,price): --expander is a "
        "Cluster Autoscaler flag, and this point runs karpenter")


def test_the_worker_needs_an_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JOB_COMPLETION_INDEX", raising=False)
    path = write_sweep(tmp_path, axes=AXES)
    result = CliRunner().invoke(cli, ["sweep", "worker", str(path), "--output",
                                      str(tmp_path / "out")])
    assert isinstance(result.exception, ConfigError)
    assert result.exception.message == "give --index, or set $JOB_COMPLETION_INDEX (found '')"
    monkeypatch.setenv("JOB_COMPLETION_INDEX", "7")
    result = CliRunner().invoke(cli, ["sweep", "worker", str(path), "--output",
                                      str(tmp_path / "out")])
    assert isinstance(result.exception, ConfigError)
    assert result.exception.message == "--index 7: the sweep has points 0 to 2"
    assert not (tmp_path / "out").exists()  # nothing created on an error


BAD_FILES = {
    "unknown axis": ({"axes": [{"speed": "x", "values": [1, 2]}]},
                     "axes[0]: an axis is exactly one of timer, caFlag, nodeGroups, autoscaler, "
                     "traceEdit (found: speed)"),
    "wrong type": ({"axes": [{"nodeGroups": {"group": "small", "field": "pricePerHour"},
                              "values": ["cheap"]}]},
                   "axes[0].values[0] (pricePerHour) must be a number, not 'cheap'"),
    "empty grid": ({"axes": [{"caFlag": "--expander", "values": []}]},
                   "axes[0].values must list at least one value"),
    "point that cannot be built": (
        {"axes": [{"autoscaler": ["karpenter"]}, *AXES]},
        "point 0 (autoscaler=karpenter, --expander=least-waste,price): --expander is a Cluster "
        "Autoscaler flag, and this point runs karpenter"),
}
COMMANDS = {
    "run": ["run", "--output", "{out}", "--parallel", "2"],
    "worker": ["worker", "--index", "0", "--output", "{out}"],
    "on-cluster": ["run", "--on-cluster", "--image", "i:1", "--pvc", "p"],
    "on-cluster dry run": ["run", "--on-cluster", "--dry-run", "--image", "i:1", "--pvc", "p"],
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("bad", BAD_FILES)
def test_a_bad_file_is_one_error_and_creates_nothing(tmp_path: Path, bad: str, command: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    def no_cluster(*args: object) -> None:
        raise AssertionError("a cluster was contacted")

    monkeypatch.setattr(sweep_cluster, "with_cluster", no_cluster)
    monkeypatch.setattr(sweep_commands, "run_point", no_cluster)
    monkeypatch.setattr(sweep_local, "run_point", no_cluster)
    top, message = BAD_FILES[bad]
    path = write_sweep(tmp_path, **top)
    out = tmp_path / "out"
    verb, *flags = COMMANDS[command]
    result = CliRunner().invoke(cli, ["sweep", verb, str(path),
                                      *(flag.format(out=out) for flag in flags)])
    assert isinstance(result.exception, ConfigError)
    assert result.exception.message == f"{path}: {message}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sw.yaml", "t.sktrace"]
