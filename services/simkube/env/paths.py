"""Where the environment keeps things: the binary cache and each environment's own directory.

Both live outside the checkout so a fresh clone reuses binaries that took tens of minutes to
build, and so several environments (``--name``) can sit side by side.
"""

from __future__ import annotations

import re
from pathlib import Path

from simkube.core.config import path_from_env
from simkube.core.errors import ConfigError

CACHE_DIR_VARIABLE = "SIMKUBE_CACHE_DIR"
STATE_DIR_VARIABLE = "SIMKUBE_HOME"
DEFAULT_ENV_NAME = "default"

_NAME_PATTERN = re.compile(r"^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$")


def cache_dir() -> Path:
    """Root of the binary cache (``$SIMKUBE_CACHE_DIR``, else ``~/.cache/simkube``)."""
    return path_from_env(CACHE_DIR_VARIABLE, Path.home() / ".cache" / "simkube")


def state_dir() -> Path:
    """Root of environment directories (``$SIMKUBE_HOME``, else ``~/.local/state/simkube``)."""
    return path_from_env(STATE_DIR_VARIABLE, Path.home() / ".local" / "state" / "simkube")


def validate_env_name(name: str) -> str:
    """Environment names become directory names and kubeconfig contexts: keep them plain."""
    if not _NAME_PATTERN.match(name):
        raise ConfigError(
            f"invalid environment name {name!r}: use 1-32 lowercase letters, digits and '-', "
            "starting and ending with a letter or digit"
        )
    return name


def env_dir(name: str) -> Path:
    return state_dir() / "envs" / validate_env_name(name)


def known_env_names() -> list[str]:
    root = state_dir() / "envs"
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / "state.json").is_file())


def results_dir(name: str) -> Path:
    """Where sk-ctrl of environment ``name`` writes results: beside, not inside, the
    environment's directory, so that they outlive ``env down``."""
    return state_dir() / "results" / name
