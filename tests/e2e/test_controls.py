"""``skctl run/status/pause/resume/delete`` against the real services, as a user types them.

The controller's state machine has its own integration tests (tests/integration/ctrl); these
check what the commands add on top: what they print, their exit codes, and that each one's
effect shows up in the resource and the cluster.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from simkube.env.toolchain.cache import binary_path
from simkube.env.toolchain.catalog import Binary
from tests.conftest import SimEnv, skctl

pytestmark = pytest.mark.e2e
PREPARED_WITHIN_S = 180.0
TRACE = Path(__file__).parents[1] / "data" / "simkube" / "dsb-scaling.sktrace"


def _status(env: SimEnv, name: str) -> dict[str, Any]:
    status: dict[str, Any] = json.loads(
        skctl("status", name, "--env", env.name, "--json").stdout).get("status") or {}
    return status


def _until(env: SimEnv, name: str, state: str, *, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while _status(env, name).get("state") != state:
        assert time.monotonic() < deadline, (
            f"{name} never became {state}: {_status(env, name)}\n{_ctrl_log(env)}")
        time.sleep(0.5)


def _ctrl_log(env: SimEnv, *, lines: int = 40) -> str:
    """The end of sk-ctrl's log, to tell from a failure which step of a run it waited on."""
    log = Path(env.kubeconfig).parent / "logs" / "sk-ctrl.log"
    return "\n".join(log.read_text().splitlines()[-lines:]) if log.is_file() else ""


def _namespaces(env: SimEnv) -> list[str]:
    listed = _kubectl(env, "get", "namespaces", "-o", "jsonpath={.items[*].metadata.name}")
    return listed.split()


def _kubectl(env: SimEnv, *args: str) -> str:
    return subprocess.run([str(binary_path(Binary.KUBECTL)), "--kubeconfig", env.kubeconfig,
                           *args], capture_output=True, text=True, check=True).stdout


def test_pause_resume_and_delete(services_env: SimEnv) -> None:
    env = services_env.name
    created = skctl("run", "--env", env, "--name", "controls", "--trace", str(TRACE),
                    "--speed", "2", "--namespace-prefix", "controls")
    assert "follow it with: skctl status controls" in created.stdout
    taken = skctl("run", "--env", env, "--name", "controls", "--trace", str(TRACE), check=False)
    assert taken.returncode == 2
    assert "a simulation named 'controls' already exists" in taken.stderr
    # Preparing restarts the scheduler and controller-manager with the run's timers and
    # waits until the controllers act (each restart is bounded at 90 s, not 60).
    _until(services_env, "controls", "Running", timeout=PREPARED_WITHIN_S)
    assert "controls-dsb" in _namespaces(services_env)

    skctl("pause", "controls", "--env", env)
    _until(services_env, "controls", "Paused")
    paused_at = _status(services_env, "controls").get("traceTimeSeconds", 0)
    time.sleep(2)
    assert _status(services_env, "controls").get("traceTimeSeconds", 0) == paused_at
    skctl("resume", "controls", "--env", env)
    _until(services_env, "controls", "Running")
    listing = skctl("status", "--env", env).stdout
    assert "controls" in listing
    assert "Running" in listing

    deleted = skctl("delete", "controls", "--env", env)
    assert "simulation 'controls' deleted" in deleted.stderr
    assert "controls" not in skctl("status", "--env", env, "--json").stdout
    assert "controls-dsb" not in _namespaces(services_env)
    gone = skctl("pause", "controls", "--env", env, check=False)
    assert gone.returncode == 2
    assert "no simulation named 'controls'" in gone.stderr


def test_a_failed_simulation_fails_the_wait(services_env: SimEnv, tmp_path: Path) -> None:
    missing = tmp_path / "gone.sktrace"
    failed = skctl("run", "--env", services_env.name, "--name", "doomed", "--trace",
                   f"file://{missing}", "--wait", "--timeout", "120", check=False)
    assert failed.returncode == 1, failed.stderr
    assert "simulation 'doomed' ended Failed" in failed.stderr
    assert str(missing) in failed.stderr
    finished = skctl("pause", "doomed", "--env", services_env.name, check=False)
    assert finished.returncode == 2
    assert "is Failed; there is nothing to pause" in finished.stderr
    skctl("delete", "doomed", "--env", services_env.name)
