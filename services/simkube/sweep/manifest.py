"""The sweep's memory on disk: ``DIR/manifest.json``, one record per point.

A sweep runs for hours; a laptop sleeps, a point's environment dies, someone presses Ctrl-C.
The manifest is what lets the same command carry on: each point's state (pending, running,
done, failed with the reason), its attempts and where its results are. It is rewritten whole
and atomically (a temporary file renamed over it) under an exclusive ``flock``, so threads
of one ``sweep run`` and separate ``sweep worker`` processes on a shared directory can update
it without losing each other's records. It also holds the sweep file's SHA-256: results of
one sweep file must never be mixed with points of an edited one.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from simkube.core.errors import ConfigError
from simkube.results.files import atomic_write

FILE = "manifest.json"
LOCK = ".manifest.lock"
SCHEMA = 1


class PointState(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


@dataclass(frozen=True, kw_only=True)
class PointRecord:
    index: int
    label: str  # what differs from the base
    state: PointState = PointState.PENDING
    reason: str = ""  # why it failed
    results: str = ""  # relative to DIR: points/<index>
    attempts: int = 0
    started_at: str = ""
    finished_at: str = ""


@dataclass(frozen=True, kw_only=True)
class Manifest:
    sweep: str
    file: str
    digest: str
    points: dict[int, PointRecord]


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@contextlib.contextmanager
def _locked(output: Path) -> Iterator[None]:
    output.mkdir(parents=True, exist_ok=True)
    with (output / LOCK).open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def read(output: Path) -> Manifest | None:
    """The manifest in ``output``, or None when there is none yet."""
    path = output / FILE
    if not path.is_file():
        return None
    try:
        tree = json.loads(path.read_text(encoding="utf-8"))
        points = {int(key): PointRecord(**{**value, "state": PointState(value["state"])})
                  for key, value in tree["points"].items()}
        return Manifest(sweep=tree["sweep"], file=tree["file"], digest=tree["digest"],
                        points=points)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path} is not a sweep manifest: {exc}") from None


def _write(output: Path, manifest: Manifest) -> None:
    tree: dict[str, Any] = {"schema": SCHEMA, "sweep": manifest.sweep, "file": manifest.file,
                            "digest": manifest.digest,
                            "points": {str(index): asdict(record) for index, record
                                       in sorted(manifest.points.items())}}
    atomic_write(output / FILE, json.dumps(tree, indent=2) + "\n")


def prepare(output: Path, *, sweep: str, file: Path, digest: str,
            labels: Sequence[str]) -> Manifest:
    """The manifest for this sweep file, created with every point pending, or the existing
    one when it was written for the same file (``ConfigError`` when the file changed)."""
    with _locked(output):
        existing = read(output)
        if existing is not None and existing.digest != digest:
            raise ConfigError(f"{output} holds results of another version of the sweep file "
                              f"{existing.file} (SHA-256 {existing.digest[:12]}…, this one "
                              f"{digest[:12]}…)",
                              hint="give a new --output, or put the sweep file back as it was")
        records = dict(existing.points) if existing else {}
        for index, label in enumerate(labels):
            records.setdefault(index, PointRecord(index=index, label=label))
        manifest = Manifest(sweep=sweep, file=str(file), digest=digest, points=records)
        _write(output, manifest)
        return manifest


def update(output: Path, index: int, **changes: Any) -> PointRecord:
    """Change point ``index``'s record (read, change, write under the lock); the new record."""
    with _locked(output):
        manifest = read(output)
        if manifest is None or index not in manifest.points:
            raise ConfigError(f"{output} has no manifest entry for point {index}")
        record = replace(manifest.points[index], **changes)
        manifest.points[index] = record
        _write(output, manifest)
        return record
