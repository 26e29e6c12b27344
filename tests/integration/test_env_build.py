"""`skctl env build` as a new user meets it: cached binaries are reused quickly, and a
missing Go or an unreachable module proxy is named as such."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from tests.conftest import skctl

pytestmark = pytest.mark.integration


def test_cached_build_is_reused_and_reports_each_group() -> None:
    started = time.monotonic()
    result = skctl("env", "build")
    assert time.monotonic() - started < 60
    for group in ("etcd v3.6.14 (cached)", "kwok v0.8.0 (cached)", "kubernetes v1.36.3 (cached)",
                  "karpenter v1.13.0 (cached)"):
        assert group in result.stderr


def test_missing_go_is_named(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": str(Path(shutil.which("python3") or "/usr/bin").parent),
           "SIMKUBE_CACHE_DIR": str(tmp_path)}
    env.pop("GO", None)
    if shutil.which("go", path=env["PATH"]):
        env["PATH"] = "/nonexistent"
    result = skctl("env", "build", check=False, env=env)
    assert result.returncode == 4
    assert "Go is not installed or not on PATH" in result.stderr


def test_unreachable_module_proxy_is_named(tmp_path: Path) -> None:
    env = {**os.environ, "SIMKUBE_CACHE_DIR": str(tmp_path / "cache"),
           "GOMODCACHE": str(tmp_path / "mod"), "GOPROXY": "http://127.0.0.1:9",
           "GOFLAGS": "-modcacherw"}
    result = skctl("env", "build", check=False, env=env)
    assert result.returncode == 4
    assert "the Go module proxy is unreachable while building etcd" in result.stderr
    assert not list((tmp_path / "cache" / "bin").glob("etcd-*"))
