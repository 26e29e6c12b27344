"""``skctl env up --services/--autoscaler``: refusals that leave nothing behind.

Starting the services for real is the end-to-end tier's fixture (tests/e2e/conftest.py);
here are the mistakes and the one thing this machine cannot do (build Cluster Autoscaler,
issue #6), each checked to fail before any process starts.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import skctl

pytestmark = pytest.mark.integration


def _isolated(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "SIMKUBE_HOME": str(tmp_path)}


def test_autoscaler_is_refused_plainly_when_its_binary_is_absent(tmp_path: Path) -> None:
    result = skctl("env", "up", "--name", "with-ca", "--autoscaler", check=False,
                   env={**_isolated(tmp_path), "SIMKUBE_CACHE_DIR": str(tmp_path / "cache")})
    assert result.returncode == 3, result.stderr
    assert "cluster-autoscaler" in result.stderr
    assert "is not in the binary cache" in result.stderr
    assert "Nothing was started" in result.stderr
    assert not (tmp_path / "envs" / "with-ca").exists()


def test_bad_node_groups_are_refused_before_anything_starts(tmp_path: Path) -> None:
    groups = tmp_path / "groups.yaml"
    groups.write_text("nodeGroups:\n- id: small\n  minSize: 5\n  maxSize: 2\n"
                      "  shape: {cpu: 2, memory: 8Gi}\n")
    result = skctl("env", "up", "--name", "bad-groups", "--services", "--node-groups",
                   str(groups), check=False, env=_isolated(tmp_path))
    assert result.returncode == 2, result.stderr
    assert "small" in result.stderr
    assert not (tmp_path / "envs" / "bad-groups").exists()


def test_node_groups_need_the_services(tmp_path: Path) -> None:
    result = skctl("env", "up", "--name", "no-services", "--node-groups",
                   str(tmp_path / "g.yaml"), check=False, env=_isolated(tmp_path))
    assert result.returncode == 2
    assert "--node-groups needs --services or --autoscaler" in result.stderr
    assert not (tmp_path / "envs" / "no-services").exists()
