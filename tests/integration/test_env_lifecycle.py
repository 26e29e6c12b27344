"""`skctl env up/status/down` as a user runs them: start time, idempotent `up`, a crashed
component reported as crashed, and `down` leaving no process behind."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from tests.conftest import skctl

pytestmark = pytest.mark.integration
UP_BUDGET_SECONDS = 20.0


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in {"Z", "X"}


def test_up_is_fast_idempotent_reports_crashes_and_down_leaves_nothing() -> None:
    name = f"life-{os.getpid()}"
    started = time.monotonic()
    skctl("env", "up", "--name", name)
    elapsed = time.monotonic() - started
    try:
        assert elapsed <= UP_BUDGET_SECONDS, f"env up took {elapsed:.1f}s"
        status = json.loads(skctl("env", "status", "--name", name, "--json").stdout)
        assert status["healthy"] is True
        pids = {c["name"]: c["pid"] for c in status["components"]}
        assert set(pids) == {"etcd", "kube-apiserver", "kube-controller-manager",
                             "kube-scheduler", "kwok"}
        assert all(c["health"] == "running" for c in status["components"])
        kubeconfig = skctl("env", "kubeconfig", "--name", name).stdout.strip()
        assert Path(kubeconfig).is_file()
        assert not kubeconfig.startswith(str(Path.home() / ".kube"))

        again = skctl("env", "up", "--name", name)
        assert "already up" in again.stderr
        second = json.loads(skctl("env", "status", "--name", name, "--json").stdout)
        assert {c["name"]: c["pid"] for c in second["components"]} == pids

        os.kill(pids["kube-scheduler"], signal.SIGKILL)
        time.sleep(0.5)
        crashed = skctl("env", "status", "--name", name, "--json", check=False)
        assert crashed.returncode == 1
        health = {c["name"]: c["health"] for c in json.loads(crashed.stdout)["components"]}
        assert health["kube-scheduler"] == "crashed"
        assert health["kube-apiserver"] == "running"

        blocked = skctl("env", "up", "--name", name, check=False)
        assert blocked.returncode != 0
        assert "kube-scheduler is not running" in blocked.stderr
    finally:
        skctl("env", "down", "--name", name)
    assert not [n for n, pid in pids.items() if _alive(pid)]
    gone = skctl("env", "status", "--name", name, check=False)
    assert gone.returncode != 0
    assert f"no environment named {name!r}" in gone.stderr
