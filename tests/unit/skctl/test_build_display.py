"""``skctl env build``'s output: plain lines with a heartbeat in a log, a live line on a
terminal, one line per finished group either way."""

from __future__ import annotations

import io
import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

from simkube.env.toolchain.building import BuildResult
from simkube.env.toolchain.catalog import ETCD, KUBERNETES, BuildGroup
from simkube.skctl import build_display

pytestmark = pytest.mark.unit


def fake_build(*, seen: list[str], pause: float = 0.0) -> Callable[..., BuildResult]:
    """etcd is cached; anything else "compiles" two packages, pausing in between."""
    def build_group(group: BuildGroup, *, force: bool, on_package: Callable[[str], None],
                    on_build: Callable[[], None]) -> BuildResult:
        if group is ETCD:
            return BuildResult(group=group, seconds=0.0, cached=True, path=Path("/c/etcd"))
        on_build()
        for line in ("go: downloading k8s.io/api v0.36.3", "k8s.io/api/core/v1"):
            on_package(line)
            seen.append(line)
            time.sleep(pause)
        return BuildResult(group=group, seconds=12.3, cached=False, path=Path("/c/k"))
    return build_group


def test_a_log_gets_plain_lines_and_a_heartbeat(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    monkeypatch.setattr(build_display, "build_group", fake_build(seen=seen, pause=0.25))
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=200)
    results = build_display.build_with_progress([ETCD, KUBERNETES], force=False,
                                                console=console, every=0.1)
    assert [r.cached for r in results] == [True, False]
    lines = out.getvalue().splitlines()
    assert lines[0] == "✓ etcd v3.6.14 (cached)"
    assert lines[1] == "[2/2] kubernetes v1.36.3: building from the Go module proxy"
    beats = [line for line in lines if line.startswith("  [2/2] kubernetes")]
    assert beats, lines  # the heartbeat, while Go works
    assert any("compiled 1 package, now k8s.io/api/core/v1" in line for line in beats)
    assert lines[-1] == "✓ kubernetes v1.36.3 built in 12s"
    assert "\x1b[" not in out.getvalue()  # no terminal codes in a log


def test_a_terminal_gets_a_live_line(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    monkeypatch.setattr(build_display, "build_group", fake_build(seen=seen))
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=200)
    build_display.build_with_progress([ETCD, KUBERNETES], force=False, console=console)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())
    assert "[1/2] etcd v3.6.14: checking the cache" in text  # drawn while it verifies
    assert "etcd v3.6.14 (cached)" in text
    assert "kubernetes v1.36.3 built in 12s" in text
    assert "building from the Go module proxy" not in text  # that is the log's wording
    assert seen == ["go: downloading k8s.io/api v0.36.3", "k8s.io/api/core/v1"]


def test_elapsed_text() -> None:
    assert build_display.elapsed_text(42.9) == "42s"
    assert build_display.elapsed_text(150) == "2m30s"
