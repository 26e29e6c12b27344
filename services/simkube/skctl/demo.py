"""``make demo``: the whole product in one story, from a fresh clone, in a few minutes.

0. build what it runs and nothing else (``skctl env build --only``), once: on a fresh
   machine that is about 20 minutes, with a live line per group;
1. start a "production" cluster (``skctl env up --nodes 1 --metrics-server``: one big fake
   node, metrics-server over KWOK's emulated usage) and run a small shop in it
   (:mod:`demo_workload`: its web front end under an HPA that follows the traffic) while
   sk-tracer records its objects, the HPA and the pods' usage; export the recording;
2. stretch the recorded seconds to the shop's day (``skctl trace edit --time-stretch``), so the
   autoscaler's production timers fit it;
3. start a simulated cluster with the project's services, metrics-server and an autoscaler
   (Karpenter, or Cluster Autoscaler when a binary is given: :mod:`demo_autoscaler`) and
   replay the day as a ``Simulation`` with the HPA active (``skctl run --hpa active
   --wait``): the recorded usage is played back, the replay's own HPA scales web, and the
   peak needs more nodes than the quiet hours, so nodes rise and fall;
4. ``skctl report`` it and print the page's path, the headline numbers and what the HPA did
   (replicas from its minimum to its peak and back, its scale events: ``summary.json``);
5. tear both clusters down, also on errors and Ctrl-C.

Two clusters, as in real use: the replay starts from the autoscaler's own nodes, not from
the ones production ran on. Each step runs the real command a user would type (printed with
a ``$``), so the demo doubles as a tutorial.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from simkube.core.cli import SPEED
from simkube.core.errors import SimkubeError
from simkube.core.logs import configure_logging
from simkube.core.simtime import TimeScale
from simkube.env.autoscalers.cluster_autoscaler import BINARY_ENV
from simkube.report import load
from simkube.skctl import demo_workload
from simkube.skctl.demo_autoscaler import DemoAutoscaler, choose
from simkube.skctl.demo_recording import BIN, console, record_production, skctl


def hpa_lines(summary: Mapping[str, Any]) -> list[str]:
    """What each HPA did in a run, from its ``summary.json``: replicas from the lowest it
    decided through its peak to where it ended, and how often it rescaled."""
    return [f"HPA {name}: replicas {h['min_desired']} → {h['peak_desired']} → "
            f"{h['final_desired']}, {h['scale_events']} scale events ({h['scale_ups']} up, "
            f"{h['scale_downs']} down)"
            for name, h in sorted((summary.get("hpas") or {}).items())]


def _headlines(report_json: str) -> None:
    report = json.loads(report_json)
    console.rule("headline numbers")
    for line in report.get("headlines", []):
        console.print(f"  {line}")
    summary = load(Path(report["runs"][0]["directory"])).summary  # its summary.json
    for line in hpa_lines(summary) or ["HPA: none acted in the replay"]:
        console.print(f"[bold]{line}[/]")
    # soft_wrap: a wrapped path could not be copied, nor found by scripts ("report: PATH").
    console.print(f"\n[bold]report:[/] {report['html']}", soft_wrap=True)
    plots = report.get("plots") or {}
    # The plots where the autoscalers' work shows: nodes rising and falling, web's replicas.
    for name in ("nodes", "hpa"):
        if plots.get(name):
            console.print(f"[bold]{name}:[/] {plots[name]}", soft_wrap=True)


def run_demo(*, env: str, workdir: Path, stretch: float, speed: TimeScale,
             autoscaler: DemoAutoscaler) -> None:
    started = time.monotonic()

    def rule(title: str) -> None:  # with the time so far: where the demo's minutes go
        console.rule(f"{title} [dim](t+{time.monotonic() - started:.0f}s)[/]")

    rule("0. the binaries it runs (built once, about 20 minutes; then cached)")
    skctl("env", "build", *(arg for group in autoscaler.builds for arg in ("--only", group)))
    rule("1. record a production workload with sk-tracer")
    recorded = record_production(env=f"{env}-prod", workdir=workdir, stretch=stretch)
    rule("2. stretch the recording to the shop's day")
    day = workdir / "shop-day.trace"
    skctl("trace", "edit", str(recorded), str(day),
          "--time-stretch", f"{demo_workload.DAY_STRETCH / stretch:g}")
    rule(f"3. replay it as a Simulation with {autoscaler.kind}")
    console.print(f"[yellow]note:[/] {autoscaler.note}; the replay's own HPA scales web from "
                  "the recorded usage.")
    skctl("env", "up", "--name", env, "--metrics-server", *autoscaler.up_args)
    skctl("run", "--env", env, "--name", "shop-replay", "--trace", str(day),
          "--speed", f"{speed.speed:g}", "--hpa", "active",
          *(arg for timer in demo_workload.HPA_TIMERS for arg in ("--timer", timer)),
          *autoscaler.run_args, "--wait")
    rule("4. report")
    _headlines(skctl("report", "shop-replay", "--env", env, "--json", capture=True))


def _down(env: str) -> None:
    """Remove an environment the demo may have started; reports, never raises, so teardown
    does not hide the error that got here."""
    status = subprocess.run([str(BIN / "skctl"), "env", "status", "--name", env, "--json"],
                            capture_output=True, check=False)
    if status.returncode == 3:  # no such environment: never started, or already down
        return
    try:
        skctl("env", "down", "--name", env)
    except SimkubeError as exc:
        console.print(f"[red]teardown:[/] {exc}")


@click.command()
@click.option("--env", "env_name", default="demo", show_default=True,
              help="The simulated cluster's name (production's is NAME-prod).")
@click.option("--workdir", type=click.Path(path_type=Path),
              help="Where the trace and logs go (default: a new directory under ./demo-out).")
@click.option("--stretch", "--time-scale", "stretch", type=click.FloatRange(min=0.05, max=10),
              default=0.5, show_default=True,
              help="Shrink (<1) or stretch the recording's timeline; the trace is stretched "
                   "back to the same day (--time-scale: its former name).")
@click.option("--speed", type=SPEED, default=6.0, show_default=True,
              help="Replay speed (the day is about 10 minutes of trace time).")
@click.option("--autoscaler-binary", type=click.Path(path_type=Path, dir_okay=False),
              help=f"Run this Cluster Autoscaler instead of Karpenter (default: "
                   f"${BINARY_ENV} when set).")
@click.option("--keep", is_flag=True, help="Leave the simulated cluster running at the end.")
def main(*, env_name: str, workdir: Path | None, stretch: float, speed: TimeScale,
         autoscaler_binary: Path | None, keep: bool) -> None:
    """Record, replay with an autoscaler and report a small workload end to end."""
    configure_logging(level="warning")  # as skctl's: what the demo itself does is printed
    started = time.monotonic()
    workdir = (workdir or Path("demo-out") / time.strftime("%Y%m%d-%H%M%S")).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    autoscaler = choose(binary=autoscaler_binary)
    console.rule(f"simkube demo: record → replay with {autoscaler.kind} → report")
    try:
        run_demo(env=env_name, workdir=workdir, stretch=stretch, speed=speed,
                 autoscaler=autoscaler)
    except SimkubeError as exc:
        console.print(f"[red]error:[/] {exc}")
        raise SystemExit(exc.exit_code) from None
    finally:
        _down(f"{env_name}-prod")
        if not keep:
            _down(env_name)
        console.print(f"demo finished in {time.monotonic() - started:.0f}s; "
                      f"trace and logs in {workdir}")


if __name__ == "__main__":
    main()
