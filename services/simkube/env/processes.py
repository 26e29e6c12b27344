"""Starting, inspecting and stopping the environment's detached processes.

Components run in their own sessions so they outlive ``skctl env up`` and a Ctrl-C in the
user's terminal does not reach them. A pid alone is not an identity (pids are reused), so each
record keeps the process start time from /proc and every check compares it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

STOP_GRACE_SECONDS = 10.0


def start_detached(argv: list[str], *, log_path: Path, env: dict[str, str] | None = None,
                   cwd: Path | None = None) -> tuple[int, int]:
    """Start ``argv`` in a new session with output appended to ``log_path``; return
    ``(pid, start_ticks)``."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True,
                                   close_fds=True, env=env, cwd=cwd)
    return process.pid, start_ticks(process.pid) or 0


def _stat_fields(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name is parenthesised and may contain spaces: split after its last ')'.
    return raw[raw.rfind(")") + 2:].split()


def start_ticks(pid: int) -> int | None:
    fields = _stat_fields(pid)
    return int(fields[19]) if fields and len(fields) > 19 else None


def is_running(pid: int, ticks: int) -> bool:
    """True when ``pid`` is alive, not a zombie, and is the process we started."""
    fields = _stat_fields(pid)
    if not fields or fields[0] in {"Z", "X"}:
        _reap(pid)
        return False
    return int(fields[19]) == ticks


def _reap(pid: int) -> None:
    # Only our own children can be reaped; for others the kernel's init does it.
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def stop(pid: int, ticks: int, *, grace: float = STOP_GRACE_SECONDS) -> None:
    """SIGTERM the process group, then SIGKILL whatever is left after ``grace`` seconds."""
    if not is_running(pid, ticks):
        return
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not is_running(pid, ticks):
                return
            time.sleep(0.05)
