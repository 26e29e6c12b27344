"""Sweep files written for tests: a base that needs no cluster, axes given per test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

BASE: dict[str, Any] = {"trace": "t.sktrace", "speed": 10, "duration": "10m", "repetitions": 2}


def write_sweep(folder: Path, *, axes: Any, stem: str = "sw", **top: Any) -> Path:
    """``folder/<stem>.yaml`` with a dummy trace beside it (a given duration means it is never
    read); ``top`` adds or replaces top-level fields (``base=...`` replaces the base)."""
    (folder / "t.sktrace").write_bytes(b"not read: the duration is given")
    document = {"version": 1, "base": dict(BASE), "axes": axes, **top}
    path = folder / f"{stem}.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path
