"""How far a figure may move before ``skctl check`` calls it a regression: the thresholds file.

A gate needs its tolerance written down next to the code it guards, reviewed like code, so
the thresholds are a small versioned YAML file rather than flags. Every figure has a shipped
default (``default-thresholds.yaml`` beside this module, documented in docs/ci.md); a user's
file lists only the figures it changes, each entry replacing that figure's default whole, so
what an entry says is all that applies to it. A bad file is one ``ThresholdsError`` naming
the file and the field (exit 2) before anything is compared.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from simkube.check.figures import Figure
from simkube.core.errors import ConfigError

VERSION = 1
DEFAULTS_FILE = Path(__file__).with_name("default-thresholds.yaml")
_ENTRY_KEYS = ("relative", "absolute", "direction", "ignore")


class ThresholdsError(ConfigError):
    """A thresholds file that cannot be used, with the field at fault."""


class Direction(enum.Enum):
    """Which way a figure's move is bad."""

    INCREASE = "increase"  # only a rise fails (cost, time pending, ...)
    DECREASE = "decrease"  # only a fall fails
    BOTH = "both"          # any move past the band fails


@dataclass(frozen=True, kw_only=True)
class Threshold:
    relative: float | None = None  # a fraction of the baseline's mean
    absolute: float | None = None  # in the figure's unit
    direction: Direction = Direction.INCREASE
    ignore: bool = False

    def tolerance(self, mean: float) -> float:
        """How far past the baseline's range a value may go: the larger of the two."""
        return max(abs(mean) * (self.relative or 0.0), self.absolute or 0.0)


Thresholds = Mapping[Figure, Threshold]


def _number(value: Any, *, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ThresholdsError(f"{where} is {value!r}, not a number")
    if not math.isfinite(value) or value < 0:
        raise ThresholdsError(f"{where} is {value!r}: it must be a finite number, 0 or more")
    return float(value)


def _entry(tree: Any, *, where: str) -> Threshold:
    if not isinstance(tree, dict):
        raise ThresholdsError(f"{where} is not a mapping",
                              hint="e.g. {relative: 0.05} or {absolute: 0}")
    unknown = sorted(str(key) for key in tree if key not in _ENTRY_KEYS)
    if unknown:
        raise ThresholdsError(f"{where}.{unknown[0]} is not a threshold field",
                              hint=f"fields: {', '.join(_ENTRY_KEYS)}")
    ignore = tree.get("ignore", False)
    if not isinstance(ignore, bool):
        raise ThresholdsError(f"{where}.ignore is {ignore!r}, not true or false")
    relative, absolute = tree.get("relative"), tree.get("absolute")
    if relative is None and absolute is None and not ignore:
        raise ThresholdsError(f"{where} has neither relative nor absolute",
                              hint="give relative (a fraction, 0.05 = 5 %), absolute, or both")
    direction = tree.get("direction", Direction.INCREASE.value)
    try:
        parsed = Direction(direction)
    except ValueError:
        raise ThresholdsError(f"{where}.direction is {direction!r}",
                              hint=f"one of {', '.join(d.value for d in Direction)}") from None
    return Threshold(
        relative=None if relative is None else _number(relative, where=f"{where}.relative"),
        absolute=None if absolute is None else _number(absolute, where=f"{where}.absolute"),
        direction=parsed, ignore=ignore)


def parse_thresholds(tree: Any, *, source: str) -> dict[Figure, Threshold]:
    """The entries of a thresholds document (only the figures it lists)."""
    if not isinstance(tree, dict):
        raise ThresholdsError(f"{source}: the top level is not a mapping",
                              hint="start with 'version: 1' and 'figures:'")
    if tree.get("version") != VERSION:
        raise ThresholdsError(f"{source}: version is {tree.get('version')!r}, expected {VERSION}")
    unknown = sorted(str(key) for key in tree if key not in ("version", "figures"))
    if unknown:
        raise ThresholdsError(f"{source}: {unknown[0]} is not a field (version, figures)")
    figures = tree.get("figures") or {}
    if not isinstance(figures, dict):
        raise ThresholdsError(f"{source}: figures is not a mapping of figure to threshold")
    known = {figure.value: figure for figure in Figure}
    parsed = {}
    for name, entry in figures.items():
        if name not in known:
            raise ThresholdsError(f"{source}: figures.{name} is not a figure",
                                  hint=f"figures: {', '.join(known)}")
        parsed[known[name]] = _entry(entry, where=f"{source}: figures.{name}")
    return parsed


def _read(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ThresholdsError(f"thresholds file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ThresholdsError(f"cannot read thresholds file {path}: {exc}") from None
    except yaml.YAMLError as exc:
        raise ThresholdsError(f"{path} is not YAML: {exc}") from None


def default_thresholds() -> dict[Figure, Threshold]:
    """The shipped thresholds, every figure."""
    return parse_thresholds(_read(DEFAULTS_FILE), source=str(DEFAULTS_FILE))


def load_thresholds(path: Path | None) -> dict[Figure, Threshold]:
    """The defaults, with the figures ``path`` lists replaced by its entries."""
    merged = default_thresholds()
    if path is not None:
        merged.update(parse_thresholds(_read(path), source=str(path)))
    return merged
