"""CPU and memory of each of the environment's processes over a measured window.

On 2 shared cores a benchmark's figure depends on who else used the CPU, so a figure that
says how fast the control plane went must also say which of its processes used the CPU, how
much the machine had left, and what was running beside it. This reads ``/proc`` for every
component the environment recorded (utime + stime, resident set now and at its peak) and
``/proc/stat`` for the whole machine, so the rest is "other load".
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simkube.env import state

TICKS = os.sysconf("SC_CLK_TCK")
PROC = Path("/proc")


@dataclass(frozen=True, kw_only=True)
class Sample:
    cpu_seconds: float  # user + system since the process started
    rss_mb: float
    peak_rss_mb: float  # VmHWM: the largest resident set the process has had


def read_process(pid: int) -> Sample | None:
    """``pid``'s CPU time and memory, or None once it has gone."""
    try:
        stat = (PROC / str(pid) / "stat").read_text()
        status = (PROC / str(pid) / "status").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) "
    cpu = (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime
    memory = {line.split(":")[0]: line.split()[1] for line in status.splitlines()
              if line.startswith(("VmRSS:", "VmHWM:"))}
    return Sample(cpu_seconds=cpu, rss_mb=int(memory.get("VmRSS", 0)) / 1024,
                  peak_rss_mb=int(memory.get("VmHWM", 0)) / 1024)


def machine_busy_seconds() -> tuple[float, float]:
    """``(busy, total)`` CPU seconds of the whole machine, all cores, since boot."""
    values = [int(v) for v in (PROC / "stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    return (sum(values[:8]) - idle) / TICKS, sum(values[:8]) / TICKS


@dataclass(kw_only=True)
class Usage:
    """Samples every ``interval`` seconds on a thread between ``start()`` and ``stop()``."""

    pids: dict[str, int]
    interval: float = 1.0
    first: dict[str, Sample] = field(default_factory=dict)
    last: dict[str, Sample] = field(default_factory=dict)
    peak_cpu_share: dict[str, float] = field(default_factory=dict)  # of one core, per interval
    _machine: tuple[float, float] = (0.0, 0.0)
    _machine_end: tuple[float, float] = (0.0, 0.0)
    _began: float = 0.0
    _ended: float = 0.0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    @classmethod
    def of_environment(cls, env: state.EnvState, *, interval: float = 1.0) -> Usage:
        return cls(pids={c.name: c.pid for c in env.components}, interval=interval)

    def _sample(self) -> dict[str, Sample]:
        found = {name: read_process(pid) for name, pid in self.pids.items()}
        return {name: sample for name, sample in found.items() if sample is not None}

    def start(self) -> None:
        self._began, self._machine = time.monotonic(), machine_busy_seconds()
        self.first = self.last = self._sample()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            now = self._sample()
            for name, sample in now.items():
                before = self.last.get(name)
                if before is not None:
                    share = (sample.cpu_seconds - before.cpu_seconds) / self.interval
                    self.peak_cpu_share[name] = max(self.peak_cpu_share.get(name, 0.0), share)
            self.last = {**self.last, **now}

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.last = {**self.last, **self._sample()}
        self._ended, self._machine_end = time.monotonic(), machine_busy_seconds()

    def report(self) -> dict[str, Any]:
        """Per process: CPU seconds in the window, its mean and peak share of one core, and
        the resident set (now and peak, MB); for the machine: how busy its cores were and how
        much of that was not the environment's."""
        wall = max(self._ended - self._began, 1e-9)
        busy_now, total_now = self._machine_end
        cores = os.cpu_count() or 1
        busy = busy_now - self._machine[0]
        processes: dict[str, Any] = {}
        for name, sample in self.last.items():
            start = self.first.get(name, sample)
            used = sample.cpu_seconds - start.cpu_seconds
            processes[name] = {"cpu_seconds": round(used, 1),
                               "cpu_cores_mean": round(used / wall, 2),
                               "cpu_cores_peak": round(self.peak_cpu_share.get(name, 0.0), 2),
                               "rss_mb": round(sample.rss_mb, 1),
                               "peak_rss_mb": round(sample.peak_rss_mb, 1)}
        ours = sum(p["cpu_seconds"] for p in processes.values())
        return {"wall_seconds": round(wall, 1), "cores": cores,
                "machine_busy_cores": round(busy / wall, 2),
                "other_load_cores": round(max(busy - ours, 0.0) / wall, 2),
                "machine_idle_cores": round(
                    max((total_now - self._machine[1]) - busy, 0.0) / wall, 2),
                "processes": processes}
