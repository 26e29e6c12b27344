"""How ``skctl status`` and ``skctl run --wait`` show Simulations on a terminal.

The listing has the columns of ``kubectl get sims`` plus the message, because a Blocked or
Failed simulation's reason is the first thing a user wants; the detail view adds every run.
"""

from __future__ import annotations

import datetime
from typing import Any

from rich.console import Console
from rich.table import Table

from simkube.simulation.states import State

# Keyed by the enum so a new state cannot be left without a colour (a unit test checks).
STATE_COLOURS: dict[str, str] = {
    State.FINISHED: "green", State.FAILED: "red", State.RUNNING: "cyan", State.PAUSED: "yellow",
    State.BLOCKED: "yellow", State.INITIALIZING: "cyan", State.PENDING: "white"}


def _state(text: str) -> str:
    colour = STATE_COLOURS.get(text)
    return f"[{colour}]{text}[/]" if colour and text else (text or "-")


def _age(created: str | None) -> str:
    if not created:
        return "-"
    then = datetime.datetime.fromisoformat(created.replace("Z", "+00:00"))
    seconds = int((datetime.datetime.now(datetime.UTC) - then).total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{max(seconds, 0)}s"


def _clock(stamp: Any) -> str:
    """``2026-11-23T07:01:57Z`` as ``07:01:57``: the date is in the details above the table,
    and a narrow terminal would cut the full stamp."""
    return str(stamp)[11:19] if stamp and len(str(stamp)) >= 19 else _cell(stamp)


def _cell(value: Any) -> str:
    return "-" if value is None or value == "" else str(value)


def print_listing(items: list[dict[str, Any]]) -> None:
    console = Console()
    if not items:
        console.print("no simulations (create one with 'skctl run --trace FILE')")
        return
    table = Table(title="simulations", title_justify="left")
    for column in ("name", "state", "run", "events", "speed", "age", "message"):
        table.add_column(column)
    for item in items:
        spec, status = item.get("spec") or {}, item.get("status") or {}
        table.add_row(item["metadata"]["name"], _state(str(status.get("state") or "")),
                      f"{_cell(status.get('currentRun'))}/{spec.get('repetitions', 1)}",
                      _cell(status.get("eventsApplied")), _cell(spec.get("speed", 1)),
                      _age(item["metadata"].get("creationTimestamp")),
                      str(status.get("message") or "")[:70])
    console.print(table)


def _speed(value: Any) -> str:
    return "-" if value is None else f"{float(value):.3g}x"


def _seconds(value: Any) -> str:
    return "-" if value is None else f"{float(value):.1f}s"


def _achieved(status: dict[str, Any]) -> str:
    """The current (or last) run's achieved speed and time held for the autoscaler."""
    if status.get("achievedSpeed") is None:
        return "-"
    return (f"{_speed(status['achievedSpeed'])} trace/wall, "
            f"{_seconds(status.get('heldSeconds'))} held for the autoscaler")


def print_details(simulation: dict[str, Any], *, console: Console | None = None) -> None:
    console = console or Console()
    spec, status = simulation.get("spec") or {}, simulation.get("status") or {}
    trace = spec.get("trace") or {}
    source = trace.get("path") or trace.get("url") or (trace.get("tracer") or {}).get("address")
    console.print(f"[bold]{simulation['metadata']['name']}[/]  {_state(status.get('state', ''))}"
                  f"  {status.get('message') or ''}")
    fields = [("trace", source), ("speed", spec.get("speed", 1)),
              ("runs", f"{status.get('completedRuns') or 0}/{spec.get('repetitions', 1)} done"),
              ("events", f"{_cell(status.get('eventsApplied'))}/"
                         f"{_cell(status.get('eventsTotal'))}"),
              ("failures", status.get("failures")),
              ("trace time", f"{_cell(status.get('traceTimeSeconds'))}s of "
                             f"{_cell(status.get('traceLengthSeconds'))}s"),
              ("lag p99", f"{_cell(status.get('lagP99Ms'))} ms"),
              ("achieved", _achieved(status)),
              ("holding", status.get("holding")),
              ("started", status.get("startTime")), ("ended", status.get("endTime")),
              ("results", status.get("resultsDir")),
              ("timers", (status.get("timers") or {}).get("appliedTo"))]
    for label, value in fields:
        console.print(f"  {label:<11} {_cell(value)}", highlight=False)
    for warning in (status.get("timers") or {}).get("warnings") or []:
        console.print(f"[yellow]warning:[/] {warning}", highlight=False)
    runs = status.get("runs") or []
    if runs:
        table = Table(title="runs", title_justify="left")
        for column in ("run", "state", "events", "failures", "speed", "held", "started",
                       "ended", "message"):
            table.add_column(column)
        for run in runs:
            lost = " (lost)" if run.get("lost") else ""  # a later run replays it
            table.add_row(_cell(run.get("run")), _state(str(run.get("state") or "")) + lost,
                          _cell(run.get("eventsApplied")), _cell(run.get("failures")),
                          _speed(run.get("achievedSpeed")), _seconds(run.get("heldSeconds")),
                          _clock(run.get("startTime")), _clock(run.get("endTime")),
                          str(run.get("message") or "")[:60])
        console.print(table)
        for run in runs:
            if run.get("warning"):
                console.print(f"[yellow]warning:[/] run {run.get('run')}: {run['warning']}")

