"""Reading untrusted YAML with errors that name the place: file, node group and field.

Config mistakes must stop sk-cloudprov at start with a message a user can act on
(``config.yaml: nodeGroups[1] "gpu": shape.memory: must be a quantity like 16Gi``), never
a traceback or a silently ignored key. ``Section`` wraps one mapping and the path that led to
it; every getter checks the type, and ``check_keys`` refuses keys nobody reads (with a
suggestion for typos such as ``maxsize``).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from typing import Any

from simkube.core.durations import DurationError, parse_seconds
from simkube.core.errors import ConfigError

_MISSING: Any = object()
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


class Section:
    """One mapping; ``owner`` names the file and group, ``field`` the dotted path inside."""

    def __init__(self, data: Any, *, owner: str, field: str = "") -> None:
        self.owner = owner
        self.field = field
        if not isinstance(data, Mapping):
            where = f"{owner}: {field}" if field else owner
            raise ConfigError(f"{where}: must be a mapping, not {_kind(data)}")
        self.data: Mapping[str, Any] = data

    def where(self, key: str) -> str:
        return f"{self.owner}: {self.field}.{key}" if self.field else f"{self.owner}: {key}"

    def error(self, key: str, problem: str) -> ConfigError:
        return ConfigError(f"{self.where(key)}: {problem}")

    def has(self, key: str) -> bool:
        return key in self.data and self.data[key] is not None

    def check_keys(self, allowed: Iterable[str]) -> None:
        known = [str(key) for key in allowed]
        for key in self.data:
            if key not in known:
                close = difflib.get_close_matches(str(key), known, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise self.error(str(key), f"unknown field{hint}; known: {', '.join(known)}")

    def get(self, key: str, kind: type | tuple[type, ...], *, default: Any = _MISSING,
            what: str) -> Any:
        value = self.data.get(key)
        if value is None:
            if default is _MISSING:
                raise self.error(key, "is required")
            return default
        # YAML's booleans are ints to Python; a count of `true` is a mistake, not 1.
        if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
            raise self.error(key, f"must be {what}, not a boolean")
        if not isinstance(value, kind):
            raise self.error(key, f"must be {what}, not {_kind(value)}")
        return value

    def string(self, key: str, *, default: Any = _MISSING) -> Any:
        value = self.get(key, str, default=default, what="a string")
        if isinstance(value, str) and not value.strip():
            raise self.error(key, "must not be empty")
        return value

    def integer(self, key: str, *, default: Any = _MISSING, low: int = 0,
                high: int = 2**31 - 1) -> int:
        value: int = self.get(key, int, default=default, what="an integer")
        if not low <= value <= high:
            raise self.error(key, f"must be between {low} and {high}, not {value}")
        return value

    def number(self, key: str, *, default: Any = _MISSING, low: float = 0.0,
               high: float = float("inf")) -> float:
        value = float(self.get(key, (int, float), default=default, what="a number"))
        if not low <= value <= high:
            raise self.error(key, f"must be between {low:g} and {high:g}, not {value:g}")
        return value

    def seconds(self, key: str) -> float:
        """A duration (``10m``, ``1h30m``, ``0``, or a number of seconds) in seconds."""
        raw = self.get(key, (str, int, float), what="a duration like 60s, 10m or 1h30m")
        if isinstance(raw, bool):
            raise self.error(key, f"{raw!r} is not a duration like 60s, 10m or 1h30m")
        if not isinstance(raw, str):
            if raw < 0:
                raise self.error(key, f"{raw!r} is negative; durations count forward")
            return float(raw)
        try:
            return parse_seconds(raw, field=self.where(key))
        except DurationError:
            raise self.error(key, f"{raw!r} is not a duration like 60s, 10m or 1h30m") from None

    def boolean(self, key: str, *, default: Any = _MISSING) -> bool:
        value: bool = self.get(key, bool, default=default, what="true or false")
        return value

    def section(self, key: str) -> Section:
        return Section(self.get(key, Mapping, what="a mapping"), owner=self.owner,
                       field=f"{self.field}.{key}" if self.field else key)

    def items(self, key: str) -> list[Any]:
        return list(self.get(key, list, default=[], what="a list"))

    def string_map(self, key: str) -> dict[str, str]:
        """A map of strings; YAML numbers and booleans in values are kept as their text."""
        raw = self.get(key, Mapping, default={}, what="a mapping of strings")
        result: dict[str, str] = {}
        for name, value in raw.items():
            if not isinstance(name, str) or not name:
                raise self.error(key, f"key {name!r} must be a non-empty string")
            if not isinstance(value, (str, int, float)):
                raise self.error(f"{key}.{name}", f"must be a string, not {_kind(value)}")
            result[name] = str(value).lower() if isinstance(value, bool) else str(value)
        return result


def _kind(value: Any) -> str:
    if value is None:
        return "empty"
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean",
            int: "an integer", float: "a number"}.get(type(value), type(value).__name__)
