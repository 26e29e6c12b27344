"""Every mistake a user can make with `skctl env` gets a specific message and leaves
nothing behind."""

from __future__ import annotations

import json
import os
import shutil
import socket
from pathlib import Path

import pytest

from simkube.env.toolchain.cache import MANIFEST, entry_dir
from simkube.env.toolchain.catalog import ETCD
from tests.conftest import skctl

pytestmark = pytest.mark.integration


def _env_with(**variables: str) -> dict[str, str]:
    return {**os.environ, **variables}


def test_unknown_environment_name_is_named() -> None:
    for command in (["status"], ["down"], ["kubeconfig"]):
        result = skctl("env", *command, "--name", "no-such-env", check=False)
        assert result.returncode == 3
        assert "no environment named 'no-such-env'" in result.stderr


def test_invalid_environment_name_is_rejected() -> None:
    result = skctl("env", "up", "--name", "Bad_Name!", check=False)
    assert result.returncode == 2
    assert "invalid environment name 'Bad_Name!'" in result.stderr


def test_port_already_taken(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = skctl("env", "up", "--name", "port-clash", "--port", str(port), check=False,
                       env=_env_with(SIMKUBE_HOME=str(tmp_path)))
    assert result.returncode == 2
    assert f"port {port} on 127.0.0.1 is already in use" in result.stderr
    assert not (tmp_path / "envs" / "port-clash").exists()


def test_missing_binaries(tmp_path: Path) -> None:
    result = skctl("env", "up", "--name", "nobin", check=False,
                   env=_env_with(SIMKUBE_CACHE_DIR=str(tmp_path / "empty"),
                                 SIMKUBE_HOME=str(tmp_path / "home")))
    assert result.returncode == 3
    assert "etcd v3.6.14 is not built" in result.stderr
    assert "skctl env build" in result.stderr
    assert not (tmp_path / "home" / "envs" / "nobin").exists()


def test_corrupt_cache_entry(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    real_entry = entry_dir(ETCD)
    fake_entry = cache / real_entry.relative_to(real_entry.parents[1])
    fake_entry.mkdir(parents=True)
    shutil.copyfile(real_entry / MANIFEST, fake_entry / MANIFEST)
    (fake_entry / "etcd").write_bytes(b"#!/bin/sh\necho truncated\n")
    (fake_entry / "etcd").chmod(0o755)
    result = skctl("env", "up", "--name", "corrupt", check=False,
                   env=_env_with(SIMKUBE_CACHE_DIR=str(cache),
                                 SIMKUBE_HOME=str(tmp_path / "home")))
    assert result.returncode == 3
    assert "the cache entry for etcd v3.6.14 is corrupt" in result.stderr
    assert "bytes, the manifest says" in result.stderr


def test_bad_scheduler_config(tmp_path: Path) -> None:
    config = tmp_path / "sched.yaml"
    config.write_text("apiVersion: v1\nkind: ConfigMap\n")
    result = skctl("env", "up", "--name", "badsched", "--scheduler-config", str(config),
                   check=False, env=_env_with(SIMKUBE_HOME=str(tmp_path / "home")))
    assert result.returncode == 2
    assert "has kind 'ConfigMap'; expected 'KubeSchedulerConfiguration'" in result.stderr


def test_up_on_running_environment_is_harmless(sim_env: object) -> None:
    name = sim_env.name  # type: ignore[attr-defined]
    before = json.loads(skctl("env", "status", "--name", name, "--json").stdout)
    result = skctl("env", "up", "--name", name)
    assert f"environment {name!r} is already up" in result.stderr
    after = json.loads(skctl("env", "status", "--name", name, "--json").stdout)
    assert [c["pid"] for c in after["components"]] == [c["pid"] for c in before["components"]]
