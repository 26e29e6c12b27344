"""What a CI system caches between jobs so that it does not rebuild the upstream binaries.

A build from the Go module proxy takes tens of minutes; a CI job that replays a trace should
pay for it once. GitHub's ``actions/cache`` (and its likes) stores a directory under a key
and restores it only on an exact key match, so the key must change exactly when a cached
entry would: it is derived from each built group's ``cache_key`` (name, version and the
fingerprint of its pinned modules and flags) plus the platform, since the binaries are
native. The directory is the binary cache's ``bin/``, outside the checkout (``env.paths``),
which is where ``skctl env build`` looks. ``skctl env build --print-cache-key`` prints both
in the ``name=value`` form a GitHub step appends to ``$GITHUB_OUTPUT``
(``.github/actions/simulate``).
"""

from __future__ import annotations

import hashlib
import platform
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from simkube.env.paths import cache_dir
from simkube.env.toolchain.catalog import BuildGroup

PREFIX = "simkube-bin"


@dataclass(frozen=True, kw_only=True)
class CiCache:
    directory: Path
    key: str

    def output_lines(self) -> list[str]:
        """``dir=...`` and ``key=...``, for ``$GITHUB_OUTPUT`` (names a step's outputs)."""
        return [f"dir={self.directory}", f"key={self.key}"]


def ci_cache(groups: Sequence[BuildGroup]) -> CiCache:
    """The directory to cache and its key for a build of ``groups`` on this machine."""
    digest = hashlib.sha256()
    for group in sorted(groups, key=lambda g: g.name):
        digest.update(group.cache_key.encode() + b"\n")
    system = f"{platform.system()}-{platform.machine()}".lower()
    return CiCache(directory=cache_dir() / "bin",
                   key=f"{PREFIX}-{system}-{digest.hexdigest()[:16]}")
