"""Replays of the ground-truth trace as Simulations, through ``skctl`` as a user runs them.

Going through the CLI rather than sk-ctrl's code is the point: the figures are what a user
gets from ``skctl run --speed S --repetitions R --wait``, node groups reset before every run
and each run's timers set for its speed by sk-ctrl. skctl's own output (its progress bar and
state lines) goes to stderr, so stdout keeps only the benchmark's JSON lines.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

BIN = Path(sys.executable).parent
SKCTL = str(BIN / "skctl")
RUN_OVERHEAD_S = 300.0  # per run: node-group reset, timers, start, namespace cleanup
# One seed for the truth and every replay: sk-cloudprov draws the n-th instance of a group
# the same provisioning delay in all of them (a Simulation's default seed is its name's).
SEED = 7


def env_down(name: str, *, keep_logs: Path | None = None) -> None:
    """Take environment ``name`` down, saying on stderr (never raising) when that fails: it
    runs in ``finally`` blocks, where an error would hide the one that got us there.
    ``keep_logs``: copy every component's log there first (``env down`` deletes them), so a
    replay's decisions can be read afterwards (CA's plans, sk-ctrl's holds and lifts)."""
    if keep_logs is not None:
        _copy_logs(name, keep_logs)
    down = subprocess.run([SKCTL, "env", "down", "--name", name], check=False,
                          capture_output=True, text=True, timeout=300)
    if down.returncode != 0:
        print(f"env down --name {name} failed: {down.stderr.strip()}", file=sys.stderr,
              flush=True)


def _copy_logs(name: str, into: Path) -> None:
    status = subprocess.run([SKCTL, "env", "status", "--name", name, "--json"], check=False,
                            capture_output=True, text=True, timeout=60)
    try:
        components = json.loads(status.stdout)["components"]
    except (ValueError, KeyError, TypeError):
        print(f"logs of {name} not kept: env status said {status.stderr.strip()!r}",
              file=sys.stderr, flush=True)
        return
    into.mkdir(parents=True, exist_ok=True)
    for component in components:
        log = Path(component.get("log") or "")
        if log.is_file():
            shutil.copyfile(log, into / f"{component['name']}.log")


class ReplayError(RuntimeError):
    """A Simulation did not finish; the message has skctl's reason."""


def skctl(*args: str, timeout: float = 600.0, show: bool = False) -> str:
    """Run skctl; its stdout (``show``: streamed to stderr instead). ``ReplayError`` on
    failure, with the end of what it printed on stderr."""
    try:
        result = subprocess.run([SKCTL, *args], text=True, check=False, timeout=timeout,
                                stdout=sys.stderr if show else subprocess.PIPE,
                                stderr=None if show else subprocess.PIPE)
    except subprocess.TimeoutExpired:
        raise ReplayError(f"skctl {' '.join(args[:2])} did not finish within "
                          f"{timeout:.0f}s") from None
    if result.returncode != 0:
        said = (result.stderr or "").strip()[-1500:]
        raise ReplayError(f"skctl {' '.join(args[:2])} failed (exit {result.returncode})"
                          + (f": {said}" if said else "; its output is above on stderr"))
    return result.stdout or ""


def simulation_name(speed: float) -> str:
    """A DNS label per speed: ``fidelity-x10``, ``fidelity-x2-5``."""
    return "fidelity-x" + f"{speed:g}".replace(".", "-").replace("+", "")


def replay(*, env: str, trace: Path, speed: float, repetitions: int,
           duration_s: float, timers: tuple[str, ...] = (), name: str | None = None,
           options: tuple[str, ...] = ()) -> list[Path]:
    """Run the Simulation (``name``, default ``simulation_name(speed)``; more ``skctl run``
    ``options``) to its end; the results directory of each of its runs, in order."""
    name = name or simulation_name(speed)
    budget = repetitions * (duration_s / speed + RUN_OVERHEAD_S)
    skctl("run", "--env", env, "--name", name, "--trace", str(trace), "--speed", f"{speed:g}",
          "--repetitions", str(repetitions), "--duration", f"{round(duration_s)}s",
          "--seed", str(SEED), *options,
          *(f"--timer={timer}" for timer in timers),
          "--wait", "--timeout", f"{budget:.0f}", timeout=budget + 120, show=True)
    status = json.loads(skctl("status", name, "--env", env, "--json"))["status"]
    runs = [Path(run["resultsDir"]) for run in status.get("runs", [])
            if run.get("state") == "Finished"]
    if len(runs) != repetitions:
        raise ReplayError(f"{name}: {len(runs)} of {repetitions} runs finished "
                          f"({status.get('message', status.get('state'))})")
    return runs
