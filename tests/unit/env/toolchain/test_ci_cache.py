"""The CI cache key: changes exactly when a built group's cache entry would."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from click.testing import CliRunner

from simkube.env.toolchain.catalog import ALL_GROUPS, CORE_GROUPS, KWOK
from simkube.env.toolchain.ci_cache import ci_cache
from simkube.skctl.env_commands import build_command

pytestmark = pytest.mark.unit


def test_the_directory_is_the_binary_cache_outside_the_checkout(tmp_path: Path) -> None:
    assert ci_cache(CORE_GROUPS).directory == tmp_path / "bin"


def test_the_key_is_stable_and_ignores_the_order_of_groups() -> None:
    key = ci_cache(CORE_GROUPS).key
    assert key == ci_cache(tuple(reversed(CORE_GROUPS))).key
    assert key.startswith("simkube-bin-")


def test_the_key_follows_each_groups_cache_key() -> None:
    bumped = dataclasses.replace(KWOK, version="v9.9.9")
    others = tuple(g for g in CORE_GROUPS if g is not KWOK)
    assert ci_cache((*others, bumped)).key != ci_cache(CORE_GROUPS).key
    assert ci_cache(ALL_GROUPS).key != ci_cache(CORE_GROUPS).key


def test_print_cache_key_prints_github_outputs_and_builds_nothing(tmp_path: Path) -> None:
    result = CliRunner().invoke(build_command, ["--print-cache-key"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == ci_cache(CORE_GROUPS).output_lines()
    assert result.output.splitlines()[0] == f"dir={tmp_path / 'bin'}"
    assert not (tmp_path / "bin").exists()
    with_ca = CliRunner().invoke(build_command, ["--print-cache-key", "--autoscaler"])
    assert with_ca.output.splitlines()[1] == f"key={ci_cache(ALL_GROUPS).key}"


def test_print_cache_key_refuses_force() -> None:
    result = CliRunner().invoke(build_command, ["--print-cache-key", "--force"])
    assert result.exit_code == 2
    assert "leave out --force" in result.output
