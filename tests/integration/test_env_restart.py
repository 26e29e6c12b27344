"""`skctl env restart`: a component crashed with SIGKILL (or stopped) comes back with its
command line, log and port, healthy; the environment keeps working; bad names are refused."""

from __future__ import annotations

import json
import os

import pytest

from tests.conftest import skctl

pytestmark = pytest.mark.integration


def components(name: str) -> dict[str, dict[str, object]]:
    status = json.loads(skctl("env", "status", "--name", name, "--json").stdout)
    return {c["name"]: c for c in status["components"]}


def test_a_killed_component_comes_back_healthy_on_its_port() -> None:
    name = f"restart-{os.getpid()}"
    skctl("env", "up", "--name", name, "--nodes", "1")
    try:
        before = components(name)["kwok"]
        result = skctl("env", "restart", "--name", name, "kwok", "--kill")
        assert "kwok killed and restarted" in result.stderr
        after = components(name)["kwok"]
        assert after["pid"] != before["pid"]
        assert (after["port"], after["log"], after["health"]) == (before["port"], before["log"],
                                                                 "running")
        skctl("env", "restart", "--name", name, "kube-scheduler")  # a graceful stop too
        assert json.loads(skctl("env", "status", "--name", name, "--json").stdout)["healthy"]
        refused = skctl("env", "restart", "--name", name, "kubelet", check=False)
        assert refused.returncode != 0
        assert "has no component 'kubelet' to restart" in refused.stderr
        assert "kube-apiserver" in refused.stderr  # the hint lists what can be restarted
    finally:
        skctl("env", "down", "--name", name, check=False)
    missing = skctl("env", "restart", "--name", name, "kwok", check=False)
    assert missing.returncode != 0
    assert f"no environment named {name!r}" in missing.stderr
