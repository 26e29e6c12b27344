from __future__ import annotations

import time
from pathlib import Path

import pytest

from simkube.env import processes

pytestmark = pytest.mark.unit


def test_start_inspect_and_stop_a_detached_process(tmp_path: Path) -> None:
    log = tmp_path / "out.log"
    pid, ticks = processes.start_detached(["sh", "-c", "echo hello; exec sleep 60"],
                                          log_path=log)
    assert processes.is_running(pid, ticks)
    assert not processes.is_running(pid, ticks + 1), "a different start time is another process"
    deadline = time.monotonic() + 5
    while "hello" not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert "hello" in log.read_text()
    processes.stop(pid, ticks, grace=5)
    assert not processes.is_running(pid, ticks)


def test_stop_escalates_to_sigkill_when_term_is_ignored(tmp_path: Path) -> None:
    pid, ticks = processes.start_detached(
        ["sh", "-c", "trap '' TERM; echo ready; while true; do sleep 0.1; done"],
        log_path=tmp_path / "log")
    time.sleep(0.3)
    started = time.monotonic()
    processes.stop(pid, ticks, grace=0.5)
    assert not processes.is_running(pid, ticks)
    assert time.monotonic() - started < 5


def test_missing_pid_is_not_running() -> None:
    assert not processes.is_running(2**22 + 12345, 1)
