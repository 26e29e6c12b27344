"""What a running ``go build -v`` is doing, read from its output, for the progress display.

A first build compiles for about 20 minutes (Kubernetes alone for most of it), and a user
who sees only a spinner cannot tell a slow build from a stuck one. ``go build -v`` says
enough to tell: ``go: downloading MODULE VERSION`` while it fetches modules, then the import
path of every package as it starts compiling it (cached packages are not named), and on
failure ``# package`` headers followed by compiler or module errors. ``BuildProgress`` keeps
the phase, the counts and what is being worked on now; ``describe`` is the one line the live
display shows and a CI log repeats every so often (``skctl env build``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

_DOWNLOADING = re.compile(r"^go: downloading (\S+) (\S+)$")
# An import path: no spaces, no colon (file:line: errors have one), not a "# pkg" header.
_PACKAGE = re.compile(r"^[A-Za-z0-9_.~+\-]+(/[A-Za-z0-9_.~+\-]+)*$")
SHOWN = 60  # characters of a package path in the one-line description


class Phase(StrEnum):
    STARTING = "starting"
    DOWNLOADING = "downloading modules"
    COMPILING = "compiling"


class LineKind(StrEnum):
    DOWNLOAD = "download"
    PACKAGE = "package"
    OTHER = "other"  # errors, warnings, anything else Go says


def classify(line: str) -> tuple[LineKind, str]:
    """What one line of ``go build -v`` output is, and the module or package it names."""
    text = line.strip()
    downloading = _DOWNLOADING.match(text)
    if downloading:
        return LineKind.DOWNLOAD, f"{downloading[1]} {downloading[2]}"
    if _PACKAGE.match(text):
        return LineKind.PACKAGE, text
    return LineKind.OTHER, text


def shorten(text: str, *, width: int = SHOWN) -> str:
    """The end of a long path (its most specific part), marked as cut with an ellipsis."""
    return text if len(text) <= width else "…" + text[-(width - 1):]


@dataclass(kw_only=True)
class BuildProgress:
    """One group's build so far; ``feed`` every output line, in order."""

    group: str
    phase: Phase = Phase.STARTING
    downloaded: int = 0
    compiled: int = 0
    current: str = ""  # the module being downloaded or the package being compiled

    def feed(self, line: str) -> None:
        kind, name = classify(line)
        if kind is LineKind.DOWNLOAD:
            self.phase, self.current = Phase.DOWNLOADING, name
            self.downloaded += 1
        elif kind is LineKind.PACKAGE:
            self.phase, self.current = Phase.COMPILING, name
            self.compiled += 1

    def describe(self) -> str:
        """``kubernetes: compiling 812 packages, now k8s.io/…`` (without the elapsed time,
        which the display adds)."""
        if self.phase is Phase.STARTING:
            return f"{self.group}: resolving modules"
        if self.phase is Phase.DOWNLOADING:
            return (f"{self.group}: downloading modules ({self.downloaded}), "
                    f"now {shorten(self.current)}")
        return (f"{self.group}: compiled {self.compiled} "
                f"package{'s' if self.compiled != 1 else ''}, now {shorten(self.current)}")
