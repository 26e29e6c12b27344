"""``skctl run --wait``: follow a Simulation's status until it ends, with a progress bar.

The bar is trace time of the current run (sk-ctrl copies sk-driver's progress into status at
most once a second), next to the run number, events applied and the replay lag, so a user
sees at a glance whether the replay keeps up. State changes are also printed as plain lines,
which is what a CI log keeps when there is no terminal to draw the bar on.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from simkube.core.errors import SimkubeError
from simkube.core.kubeapi import KubeClient
from simkube.ctrl.decisions import state_of
from simkube.simulation.states import TERMINAL
from simkube.skctl import sim_client

POLL_INTERVAL = 0.5
# A Simulation without any status this long after creation has no sk-ctrl looking at it.
NO_CONTROLLER_AFTER = 20.0
LOG_EVERY = 10.0


class WaitTimeoutError(SimkubeError):
    """``--wait`` gave up before the simulation ended; the simulation goes on."""

    exit_code = 124  # what timeout(1) uses


@dataclass(frozen=True, kw_only=True)
class Snapshot:
    state: str
    run: int
    runs: int
    events: str
    trace_time: float
    trace_length: float
    lag: str
    message: str

    @classmethod
    def of(cls, simulation: dict[str, Any]) -> Snapshot:
        status = simulation.get("status") or {}
        total = status.get("eventsTotal")
        lag = status.get("lagMs")
        return cls(state=str(status.get("state") or "(no status yet)"),
                   run=int(status.get("currentRun") or 0),
                   runs=int((simulation.get("spec") or {}).get("repetitions") or 1),
                   events=f"{status.get('eventsApplied') or 0}/{total if total else '?'}",
                   trace_time=float(status.get("traceTimeSeconds") or 0.0),
                   trace_length=float(status.get("traceLengthSeconds") or 0.0),
                   lag="-" if lag is None else f"{float(lag):.0f}ms",
                   message=str(status.get("message") or ""))

    def trace_progress(self) -> str:
        """Trace seconds replayed of the run's length, once the driver has said it."""
        length = f"{self.trace_length:.0f}s" if self.trace_length else "?"
        return f"{self.trace_time:.0f}s/{length}"

    def line(self) -> str:
        text = f"{self.state} (run {self.run}/{self.runs}, events {self.events})"
        return f"{text}: {self.message}" if self.message else text


def _progress(console: Console) -> Progress:
    return Progress(SpinnerColumn(), TextColumn("[bold]{task.fields[state]:<12}"), BarColumn(),
                    TextColumn("trace {task.fields[trace]}"),
                    TextColumn("run {task.fields[run]}"),
                    TextColumn("events {task.fields[events]}"),
                    TextColumn("lag {task.fields[lag]}"), TimeElapsedColumn(),
                    console=console, transient=True)


async def follow(kube: KubeClient, name: str, *, console: Console,
                 timeout: float | None) -> dict[str, Any]:
    """Poll ``name`` until it is Finished or Failed and return it (``WaitTimeoutError`` past
    ``timeout``)."""
    started = time.monotonic()
    last_key: tuple[str, int, str] | None = None
    last_logged = started
    warned = False
    with _progress(console) as progress:
        task = progress.add_task(name, total=None, state="", run="-", events="-", lag="-",
                                 trace="-")
        while True:
            simulation = await sim_client.get(kube, name)
            snap = Snapshot.of(simulation)
            # A line per state or run change; without a terminal (a CI log) also a line of
            # progress every LOG_EVERY seconds, since no bar is drawn there.
            key = (snap.state, snap.run, snap.message)
            periodic = (not console.is_terminal
                        and time.monotonic() - last_logged >= LOG_EVERY)
            if snap.state != "(no status yet)" and (key != last_key or periodic):
                progress.console.print(f"{name}: {snap.line()}, trace {snap.trace_progress()}",
                                       soft_wrap=True)
                last_key, last_logged = key, time.monotonic()
            progress.update(task, state=snap.state, run=f"{snap.run}/{snap.runs}",
                            events=snap.events, lag=snap.lag, trace=snap.trace_progress(),
                            completed=snap.trace_time,
                            total=snap.trace_length or None)
            if state_of(simulation) in TERMINAL:
                return simulation
            waited = time.monotonic() - started
            if not warned and not simulation.get("status") and waited > NO_CONTROLLER_AFTER:
                progress.console.print(f"[yellow]{name} has no status after "
                                       f"{NO_CONTROLLER_AFTER:.0f}s: is sk-ctrl running?[/]")
                warned = True
            if timeout is not None and waited > timeout:
                raise WaitTimeoutError(f"simulation {name!r} is still {snap.state} after "
                                  f"{timeout:.0f}s; it goes on without us",
                                  hint=f"'skctl status {name}' to look again")
            await asyncio.sleep(POLL_INTERVAL)
