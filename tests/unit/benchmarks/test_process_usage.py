"""A process's CPU time and memory from /proc, and a window's report of them."""

from __future__ import annotations

import os
import time

import pytest

from benchmarks.process_usage import Usage, machine_busy_seconds, read_process

pytestmark = pytest.mark.unit


def test_this_process_reads_as_using_cpu_and_memory() -> None:
    sample = read_process(os.getpid())
    assert sample is not None
    assert sample.cpu_seconds > 0
    assert 1 < sample.rss_mb <= sample.peak_rss_mb


def test_a_process_that_has_gone_reads_as_none() -> None:
    assert read_process(2**22 + 1) is None  # above the kernel's pid_max limit


def test_the_machine_is_busy_for_part_of_its_time() -> None:
    busy, total = machine_busy_seconds()
    assert 0 < busy < total


def test_a_window_reports_the_cpu_spent_in_it() -> None:
    usage = Usage(pids={"me": os.getpid(), "gone": 2**22 + 1}, interval=0.05)
    usage.start()
    deadline = time.process_time() + 0.3
    while time.process_time() < deadline:  # burn 0.3 s of CPU
        pass
    usage.stop()
    time.sleep(0.3)  # a report made later still covers the window only
    report = usage.report()
    me = report["processes"]["me"]
    assert me["cpu_seconds"] >= 0.2
    assert me["cpu_cores_peak"] > 0
    assert me["rss_mb"] > 1
    assert "gone" not in report["processes"]
    assert report["cores"] == os.cpu_count()
    assert 0 < report["machine_busy_cores"] <= report["cores"] + 0.1
