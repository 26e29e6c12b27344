"""``skctl study autoscalers``: one trace under Cluster Autoscaler and under Karpenter, compared.

People choosing or tuning an autoscaler want to see both replay the same production trace on
the same catalogue and prices. The study does what a user would do by hand, with the same
commands (each one echoed, so any step can be rerun alone): for each autoscaler a fresh
environment (``skctl env up --autoscaler KIND``, same node-groups file), the trace replayed
as a Simulation at the same speed and seed (``skctl run --wait``) for the trace's span and a
tail after it (15 minutes of trace time by default: scale-down takes that long), the
environment stopped.
The runs' results are copied under the study's output, then compared (``report.render``:
nodes, cost and pending pods over trace time side by side, every metric with the differences
called out) into one HTML page, and the headline figures are printed.

Cluster Autoscaler cannot be built from this project's module proxy (docs/cloudprov.md); when
no CA binary is found the study says why and runs Karpenter alone.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from simkube.core.cli import SPEED
from simkube.core.durations import go_duration, parse_duration
from simkube.core.errors import EnvironmentStateError, SimkubeError
from simkube.core.simtime import TimeScale
from simkube.env.autoscalers import cluster_autoscaler as ca
from simkube.env.autoscalers.kinds import AutoscalerKind
from simkube.env.paths import results_dir
from simkube.report import locate
from simkube.report.loading import RunData, load
from simkube.report.render import Rendered, make_comparison, make_report
from simkube.trace import read_trace

console = Console(stderr=True)
SKCTL = Path(sys.executable).parent / "skctl"
DEFAULT_TAIL = "15m"


@dataclass(frozen=True, kw_only=True)
class StudyPlan:
    trace: Path
    scale: TimeScale
    seed: int
    output: Path
    node_groups: Path | None = None
    ca_binary: Path | None = None  # None: Karpenter only
    duration: str | None = None  # trace time to replay, tail included
    timers: tuple[str, ...] = ()


def replay_duration(trace: Path, *, tail: str) -> str:
    """The trace's span plus ``tail``: a trace usually ends with its load still there, and
    what each autoscaler does once the load settles (how soon it gives nodes back) is half
    of what a study is for."""
    whole = read_trace(trace)
    span_ms = max(0, (whole.end_ms or 0) - (whole.start_ms or 0))  # None: no events
    return go_duration(span_ms + parse_duration(tail, field="--tail", allow_zero=True))


def skctl(*args: str) -> None:
    """Run skctl as the user would, echoing the command; its output streams."""
    console.print(f"[bold cyan]$ skctl {shlex.join(args)}[/]", soft_wrap=True)
    done = subprocess.run([str(SKCTL), *args], check=False)
    if done.returncode != 0:
        raise SimkubeError(f"skctl {' '.join(args[:2])} failed (exit {done.returncode})")


def find_ca(binary: Path | None) -> Path | None:
    """The CA binary to study, or None after saying why there is none."""
    try:
        found = ca.resolve(binary)
    except EnvironmentStateError as exc:
        console.print(f"[yellow]Cluster Autoscaler is not available, so the study runs "
                      f"Karpenter only:[/] {exc.message}", soft_wrap=True)
        return None
    if found.warning:
        console.print(f"[yellow]warning:[/] {found.warning}")
    return found.path


def run_one(plan: StudyPlan, kind: AutoscalerKind) -> RunData:
    """``kind`` replays the trace in a fresh environment; its results, copied to the study."""
    env = f"study-{kind.value}-{os.getpid()}"
    simulation = f"study-{kind.value}"
    up = ["env", "up", "--name", env, "--autoscaler", kind.value]
    if plan.node_groups is not None:
        up += ["--node-groups", str(plan.node_groups)]
    if kind is AutoscalerKind.CLUSTER_AUTOSCALER and plan.ca_binary is not None:
        up += ["--autoscaler-binary", str(plan.ca_binary)]
    run = ["run", "--env", env, "--name", simulation, "--trace", str(plan.trace),
           "--speed", f"{plan.scale.speed:g}", "--seed", str(plan.seed), "--wait"]
    if plan.duration:
        run += ["--duration", plan.duration]
    for timer in plan.timers:
        run += ["--timer", timer]
    console.rule(f"{kind.value}: replay at {plan.scale.speed:g}x")
    skctl(*up)
    try:
        skctl(*run)
    finally:
        skctl("env", "down", "--name", env)
    source = locate.run_dir(locate.simulation_dir(name=simulation, results=results_dir(env)),
                            run=None)
    kept = plan.output / kind.value
    shutil.rmtree(kept, ignore_errors=True)
    shutil.copytree(source, kept)
    return load(kept, label=kind.value)


def summary_table(runs: Sequence[RunData]) -> Table:
    table = Table(title="autoscalers on the same trace")
    for column in ("autoscaler", "cost", "node hours", "peak nodes", "pending p90",
                   "scale-ups", "nodes removed"):
        table.add_column(column, justify="left" if column == "autoscaler" else "right",
                         no_wrap=True)
    for run in runs:
        summary = run.summary
        p90 = (summary.get("pods") or {}).get("pending_p90_s")
        table.add_row(run.label, f"${summary.get('cost_usd', 0):.3f}",
                      f"{summary.get('node_hours', 0):.2f}",
                      f"{max(run.timeline.get('nodes_total') or [0]):g}",
                      "-" if p90 is None else f"{p90:.1f}s",
                      str(_scale_ups(summary)),
                      str(sum((summary.get("disruptions") or {}).values())))
    return table


def _scale_ups(summary: Mapping[str, Any]) -> int:
    """Steps up in the nodes count, as observed (counted alike for both autoscalers)."""
    return sum(int(group.get("scale_ups", 0)) for group in (summary.get("groups") or {}).values())


def run_study(plan: StudyPlan) -> tuple[list[RunData], Rendered]:
    """Each autoscaler's run (CA first: the baseline differences are stated against) and
    the rendered comparison (a plain report when only Karpenter ran)."""
    kinds = ([AutoscalerKind.CLUSTER_AUTOSCALER] if plan.ca_binary else []) + [
        AutoscalerKind.KARPENTER]
    runs = [run_one(plan, kind) for kind in kinds]
    target = plan.output / "comparison"
    if len(runs) == 1:
        return runs, make_report(runs, output=target)
    return runs, make_comparison(runs, output=target)


@click.group("study")
def study_group() -> None:
    """Studies that run one trace several ways and compare the results."""


@study_group.command("autoscalers")
@click.option("--trace", type=click.Path(path_type=Path, dir_okay=False, exists=True),
              required=True, help="The trace to replay under each autoscaler.")
@click.option("--speed", type=SPEED, default=10.0,
              show_default=True, help="Replay speed (timers are scaled with it).")
@click.option("--seed", type=click.IntRange(min=0), default=1, show_default=True,
              help="The runs' seed (provisioning jitter), the same for both.")
@click.option("--node-groups", type=click.Path(path_type=Path, dir_okay=False, exists=True),
              help="The catalogue both autoscalers scale (default: the shipped one).")
@click.option("--autoscaler-binary", type=click.Path(path_type=Path),
              help=f"Cluster Autoscaler (default: ${ca.BINARY_ENV}, else the binary cache).")
@click.option("--duration", help="Trace time to replay (default: all of it and --tail).")
@click.option("--tail", help=f"Trace time to keep going after the trace's last event, so "
                             f"scale-down shows (default {DEFAULT_TAIL}; 0s: none).")
@click.option("--timer", "timers", multiple=True, metavar="SECTION.NAME=DURATION",
              help="A timer for both runs, in trace time (as 'skctl run --timer').")
@click.option("--output", type=click.Path(path_type=Path, file_okay=False),
              help="Where results and the comparison go (default: ./study-out/<time>).")
def autoscalers_command(  # noqa: PLR0917  # click passes every option as a parameter
        trace: Path, speed: TimeScale, seed: int, node_groups: Path | None,
        autoscaler_binary: Path | None, duration: str | None, tail: str | None,
        timers: tuple[str, ...], output: Path | None) -> None:
    """Replay TRACE under Cluster Autoscaler and Karpenter and compare them."""
    started = time.monotonic()
    if duration and tail is not None:
        raise click.UsageError("--duration and --tail exclude each other")
    duration = duration or replay_duration(trace, tail=DEFAULT_TAIL if tail is None else tail)
    output = (output or Path("study-out") / time.strftime("%Y%m%d-%H%M%S")).resolve()
    output.mkdir(parents=True, exist_ok=True)
    plan = StudyPlan(trace=trace.resolve(), scale=speed, seed=seed, output=output,
                     node_groups=node_groups.resolve() if node_groups else None,
                     ca_binary=find_ca(autoscaler_binary), duration=duration, timers=timers)
    runs, rendered = run_study(plan)
    out = Console()
    # Piped (a log, CI), rich would squeeze the table into 80 columns and cut the names.
    (out if out.is_terminal else Console(width=120)).print(summary_table(runs))
    for text in rendered.callouts or ():
        click.echo(f"  - {text}")
    click.echo(f"study finished in {time.monotonic() - started:.0f}s")
    click.echo(f"report: {rendered.html}")
