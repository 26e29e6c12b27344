"""Loading configuration files and settings with errors that name the file and the field.

Config files are YAML. A problem is reported as a ``ConfigError`` naming the file, and where
the YAML parser knows it, the line and column, so users never see a parser traceback.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from simkube.core.errors import ConfigError

MAX_CONFIG_BYTES = 16 * 1024 * 1024


def load_yaml_mapping(path: Path, *, what: str) -> dict[str, Any]:
    """Read a YAML file whose top level must be a mapping; ``what`` names it in errors."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise ConfigError(f"{what} {path} does not exist") from None
    except OSError as exc:
        raise ConfigError(f"{what} {path} cannot be read: {exc.strerror}") from None
    if size > MAX_CONFIG_BYTES:
        raise ConfigError(f"{what} {path} is {size} bytes; the limit is {MAX_CONFIG_BYTES}")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{what} {path} is not UTF-8 text") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{what} {path} is not valid YAML{where}: {problem}") from None
    if not isinstance(data, dict):
        kind = "empty" if data is None else f"a {type(data).__name__}"
        raise ConfigError(f"{what} {path} must be a YAML mapping, but it is {kind}")
    return data


def path_from_env(variable: str, default: Path) -> Path:
    """A directory from an environment variable when set and non-empty, else ``default``."""
    value = os.environ.get(variable, "").strip()
    return Path(value).expanduser() if value else default
