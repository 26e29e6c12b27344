"""The on-disk cache of built binaries, keyed by group, version and module fingerprint.

An entry is a directory holding the binaries and a ``manifest.json`` written last, so an
interrupted build never looks complete. ``verify`` checks sizes on every use (cheap) and,
when asked, SHA-256 digests (what ``skctl env build`` does before trusting an entry).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from simkube.core.errors import EnvironmentStateError
from simkube.env.paths import cache_dir
from simkube.env.toolchain.catalog import Binary, BuildGroup, group_of

MANIFEST = "manifest.json"
ASSETS = "assets"  # files a group keeps beside its binaries (catalog.BuildGroup.assets)


class EntryState(StrEnum):
    READY = "ready"
    MISSING = "missing"
    CORRUPT = "corrupt"


@dataclass(frozen=True, kw_only=True)
class EntryCheck:
    state: EntryState
    reason: str = ""


def entry_dir(group: BuildGroup) -> Path:
    return cache_dir() / "bin" / group.cache_key


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _read_manifest(directory: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((directory / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _problem(group: BuildGroup, directory: Path, *, deep: bool) -> str | None:
    """Why the entry cannot be trusted, or None when it can."""
    manifest = _read_manifest(directory)
    if manifest is None or not isinstance(manifest.get("binaries"), dict):
        return f"{directory / MANIFEST} is unreadable"
    for binary in group.packages:
        recorded = manifest["binaries"].get(binary.value)
        path = directory / binary.value
        if not isinstance(recorded, dict) or not path.is_file():
            return f"{path} is missing"
        if not os.access(path, os.X_OK):
            return f"{path} is not executable"
        size = path.stat().st_size
        if size != recorded.get("size"):
            return f"{path} has {size} bytes, the manifest says {recorded.get('size')}"
        if deep and file_digest(path) != recorded.get("sha256"):
            return f"{path} does not match its recorded SHA-256"
    return _missing_asset(group, directory)


def _missing_asset(group: BuildGroup, directory: Path) -> str | None:
    for _, asset in group.assets:
        if not (directory / ASSETS / Path(asset).name).is_file():
            return f"{directory / ASSETS / Path(asset).name} is missing"
    return None


def verify(group: BuildGroup, *, deep: bool = False) -> EntryCheck:
    directory = entry_dir(group)
    if not directory.exists():
        return EntryCheck(state=EntryState.MISSING)
    problem = _problem(group, directory, deep=deep)
    if problem is not None:
        return EntryCheck(state=EntryState.CORRUPT, reason=problem)
    return EntryCheck(state=EntryState.READY)


def install_entry(group: BuildGroup, *, staging: Path, build_seconds: float) -> Path:
    """Record digests, then move a finished build into place in one rename."""
    binaries = {
        binary.value: {"size": (staging / binary.value).stat().st_size,
                       "sha256": file_digest(staging / binary.value)}
        for binary in group.packages
    }
    manifest = {"group": group.name, "version": group.version,
                "fingerprint": group.fingerprint, "build_seconds": round(build_seconds, 1),
                "binaries": binaries}
    (staging / MANIFEST).write_text(json.dumps(manifest, indent=2))
    final = entry_dir(group)
    final.parent.mkdir(parents=True, exist_ok=True)
    if final.exists():
        shutil.rmtree(final)
    staging.rename(final)
    return final


def binary_path(binary: Binary) -> Path:
    """The cached binary, or a specific error telling the user how to get it."""
    group = group_of(binary)
    check = verify(group)
    if check.state is EntryState.MISSING:
        flag = " --autoscaler" if group.optional else ""
        raise EnvironmentStateError(
            f"{binary.value} {group.version} is not built (looked in {entry_dir(group)})",
            hint=f"run 'skctl env build{flag}' (a one-time build from the Go module proxy)",
        )
    if check.state is EntryState.CORRUPT:
        raise EnvironmentStateError(
            f"the cache entry for {group.name} {group.version} is corrupt: {check.reason}",
            hint="run 'skctl env build' to rebuild it",
        )
    return entry_dir(group) / binary.value


def asset_paths(group: BuildGroup) -> list[Path]:
    """The group's assets in a verified entry (``binary_path``'s errors otherwise)."""
    directory = binary_path(next(iter(group.packages))).parent
    return [directory / ASSETS / Path(asset).name for _, asset in group.assets]
