"""Simulation names per speed are DNS labels; an environment's logs are kept before it goes."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from benchmarks import fidelity_replay
from benchmarks.fidelity_replay import env_down, simulation_name

pytestmark = pytest.mark.unit
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


@pytest.mark.parametrize(("speed", "name"), [(1.0, "fidelity-x1"), (10.0, "fidelity-x10"),
                                             (2.5, "fidelity-x2-5"), (0.25, "fidelity-x0-25")])
def test_one_name_per_speed(speed: float, name: str) -> None:
    assert simulation_name(speed) == name
    assert DNS_LABEL.fullmatch(name)


def test_env_down_keeps_every_component_log_first(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    ca_log = tmp_path / "env" / "cluster-autoscaler.log"
    ca_log.parent.mkdir()
    ca_log.write_text("I1128 Final scale-up plan: [{large 1->3 (max: 10)}]\n")
    calls: list[list[str]] = []

    def run(argv: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        calls.append(argv[1:])
        status = {"components": [{"name": "cluster-autoscaler", "log": str(ca_log)},
                                 {"name": "etcd", "log": str(tmp_path / "never-written.log")}]}
        out = json.dumps(status) if argv[1:3] == ["env", "status"] else ""
        if argv[1:3] == ["env", "down"]:
            ca_log.unlink()  # what env down does to the logs
        return subprocess.CompletedProcess(argv, 0, stdout=out, stderr="")
    monkeypatch.setattr(fidelity_replay.subprocess, "run", run)
    env_down("bench-fid-1", keep_logs=tmp_path / "kept")
    assert [c[:2] for c in calls] == [["env", "status"], ["env", "down"]]
    assert (tmp_path / "kept" / "cluster-autoscaler.log").read_text().startswith("I1128 Final")
    assert not (tmp_path / "kept" / "etcd.log").exists()
