from __future__ import annotations

from pathlib import Path

import pytest

from simkube.core.errors import ConfigError
from simkube.env import paths

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("name", ["default", "a", "env-2", "x" * 32])
def test_valid_names(name: str) -> None:
    assert paths.validate_env_name(name) == name


@pytest.mark.parametrize("name", ["", "Upper", "-lead", "trail-", "under_score", "x" * 33])
def test_invalid_names(name: str) -> None:
    with pytest.raises(ConfigError, match="invalid environment name"):
        paths.validate_env_name(name)


def test_directories_follow_environment_variables(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    monkeypatch.setenv(paths.CACHE_DIR_VARIABLE, str(tmp_path / "c"))
    monkeypatch.setenv(paths.STATE_DIR_VARIABLE, str(tmp_path / "s"))
    assert paths.cache_dir() == tmp_path / "c"
    assert paths.env_dir("dev") == tmp_path / "s" / "envs" / "dev"


def test_known_names_lists_only_environments_with_state(monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    monkeypatch.setenv(paths.STATE_DIR_VARIABLE, str(tmp_path))
    assert paths.known_env_names() == []
    (tmp_path / "envs" / "b").mkdir(parents=True)
    (tmp_path / "envs" / "b" / "state.json").write_text("{}")
    (tmp_path / "envs" / "a").mkdir()
    assert paths.known_env_names() == ["b"]
