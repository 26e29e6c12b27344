"""``skctl sweep plan|run|worker|report``: one trace replayed over a grid of settings.

Thin commands over ``simkube.sweep``: the file is read and every point built (and checked)
before anything starts; ``run`` runs the points here (``sweep_local``: ``--parallel``
environments at a time, one progress bar) or, with ``--on-cluster``, hands them to Kubernetes
as an Indexed Job (``sweep_cluster``); ``worker`` runs one
point by index, as a pod of a Kubernetes Indexed Job would; ``report`` reads what the runs
left. Tables and JSON go to stdout, progress to stderr.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from simkube.core.durations import human_duration
from simkube.core.errors import ConfigError
from simkube.report.tables import rich_table
from simkube.skctl.cluster_options import env_option, json_option, kubeconfig_option
from simkube.skctl.sweep_cluster import ClusterFlags, submit
from simkube.skctl.sweep_local import SweepFailedError, point_estimate, run_locally
from simkube.skctl.sweep_point import run_point
from simkube.sweep import running
from simkube.sweep.estimate import RUN_OVERHEAD_S, makespan
from simkube.sweep.manifest import PointState
from simkube.sweep.points import Point, build_points
from simkube.sweep.report import make_report
from simkube.sweep.spec import Sweep, load_sweep

PIPED_WIDTH = 400  # a table printed to a file or pipe: as wide as its content
INDEX_ENV = "JOB_COMPLETION_INDEX"  # set by Kubernetes in each pod of an Indexed Job
file_argument = click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
parallel_option = click.option(
    "--parallel", type=click.IntRange(min=1), default=1, show_default=True,
    help="Points at a time, each in its own environment. On 2 cores, 2 ran 1.7x and 3 ran "
         "2.2x the simulations an hour of 1, but side by side replays fall further behind "
         "their speed and pending p90 rose 22 % at 2 (docs/benchmarks.md), so 1 is the "
         "default: a point's figures are then a lone replay's. Compare points run at one "
         "--parallel.")


@click.group("sweep")
def sweep_group() -> None:
    """Replay one trace over a grid of settings and find the trade-offs (docs/sweeps.md)."""


def _load(file: Path) -> tuple[Sweep, list[Point]]:
    sweep = load_sweep(file)
    try:
        return sweep, build_points(sweep)
    except ConfigError as exc:  # a point that cannot be built: name the file too
        raise ConfigError(f"{file}: {exc.message}", hint=exc.hint) from None


@sweep_group.command("plan")
@file_argument
@parallel_option
@json_option
def plan_command(file: Path, parallel: int, as_json: bool) -> None:
    """Print every point of FILE and the estimated wall time; start nothing."""
    sweep, points = _load(file)
    estimates = [point_estimate(sweep)] * len(points)
    total = makespan(estimates, parallel=parallel)
    if as_json:
        click.echo(json.dumps({
            "sweep": sweep.name, "file": str(sweep.path), "digest": sweep.digest,
            "parallel": parallel, "overhead_s": RUN_OVERHEAD_S, "estimate_s": round(total, 1),
            "points": [{"index": p.index, "differs": list(p.differs),
                        "settings": [axis.setting(value) for axis, value in p.settings],
                        "autoscaler": p.autoscaler.value, "estimate_s": round(seconds, 1)}
                       for p, seconds in zip(points, estimates, strict=True)]}, indent=2))
        return
    table = Table(title=f"sweep {sweep.name}: {len(points)} points")
    for column in ("point", "differs from the base", "autoscaler", "estimate"):
        table.add_column(column, justify="right" if column in ("point", "estimate") else "left")
    for point, seconds in zip(points, estimates, strict=True):
        table.add_row(str(point.index), point.label, point.autoscaler.value,
                      human_duration(seconds * 1000))
    out = Console()
    # Piped (a log, CI), rich would squeeze the table into 80 columns and cut the settings;
    # the labels of a sweep with several axes run past 160 columns, so allow PIPED_WIDTH.
    (out if out.is_terminal else Console(width=PIPED_WIDTH)).print(table)
    click.echo(f"estimated wall time at --parallel {parallel}: {human_duration(total * 1000)} "
               f"({sweep.base.repetitions} x replay ÷ {sweep.base.scale.speed:g} + "
               f"{RUN_OVERHEAD_S:g} s overhead a point; not counted: parallel points slow "
               "each other, on 2 cores each took 1.18x as long at --parallel 2 and 1.36x at 3, "
               "docs/benchmarks.md)")


@sweep_group.command("run")
@file_argument
@click.option("--output", type=click.Path(path_type=Path, file_okay=False),
              help="The sweep's directory: manifest, points/<index>/run-N, report "
                   "(required unless --on-cluster).")
@parallel_option
@click.option("--on-cluster", is_flag=True,
              help="Run the points as a Kubernetes Indexed Job instead, --parallel pods at "
                   "a time, on the cluster of --kubeconfig (docs/sweeps.md).")
@click.option("--image", help="--on-cluster: the image the pods run "
                              "(deploy/sweep.Dockerfile).")
@click.option("--pvc", help="--on-cluster: the PersistentVolumeClaim the results go to.")
@click.option("--namespace", default="default", show_default=True,
              help="--on-cluster: the namespace of the Job and its ConfigMap.")
@click.option("--trace-in-volume", default="", metavar="PATH",
              help="--on-cluster: read the trace from PATH inside the volume instead of "
                   "carrying it in the ConfigMap (needed above 900 KiB).")
@click.option("--render", "render_only", is_flag=True,
              help="--on-cluster: print the ConfigMap and Job as YAML; contact nothing.")
@click.option("--dry-run", is_flag=True,
              help="--on-cluster: a server-side dry run; the API server checks, stores nothing.")
@kubeconfig_option
@env_option
def run_command(*, file: Path, output: Path | None, parallel: int, on_cluster: bool,
                image: str | None, pvc: str | None, namespace: str, trace_in_volume: str,
                render_only: bool, dry_run: bool, kubeconfig: Path | None,
                env_name: str | None) -> None:
    """Run every point of FILE not yet done in OUTPUT; rerun to resume. With --on-cluster,
    hand the points to Kubernetes as an Indexed Job instead."""
    sweep, points = _load(file)
    if on_cluster:
        submit(sweep, points, parallel=parallel, flags=ClusterFlags(
            image=image, pvc=pvc, namespace=namespace, trace_in_volume=trace_in_volume,
            render_only=render_only, dry_run=dry_run, kubeconfig=kubeconfig,
            env_name=env_name))
        return
    cluster_only = [flag for flag, given in (
        ("--image", image), ("--pvc", pvc), ("--trace-in-volume", trace_in_volume),
        ("--render", render_only), ("--dry-run", dry_run), ("--kubeconfig", kubeconfig),
        ("--env", env_name)) if given]
    if cluster_only:
        raise ConfigError(f"{', '.join(cluster_only)} only apply with --on-cluster")
    if output is None:
        raise ConfigError("give --output DIR (the sweep's directory), or --on-cluster")
    run_locally(sweep, points, output=output, parallel=parallel)


@sweep_group.command("worker")
@file_argument
@click.option("--index", type=click.IntRange(min=0),
              help=f"The point to run (default: ${INDEX_ENV}, as in an Indexed Job).")
@click.option("--output", type=click.Path(path_type=Path, file_okay=False), required=True,
              help="The sweep's directory (shared by every worker).")
def worker_command(file: Path, index: int | None, output: Path) -> None:
    """Run one point of FILE (what each pod of an Indexed Job runs)."""
    if index is None:
        raw = os.environ.get(INDEX_ENV, "")
        if not raw.isdigit():
            raise ConfigError(f"give --index, or set ${INDEX_ENV} (found {raw!r})")
        index = int(raw)
    sweep, points = _load(file)
    if index >= len(points):
        raise ConfigError(f"--index {index}: the sweep has points 0 to {len(points) - 1}")
    running.prepare(sweep, points, output=output)
    record = running.execute_point(sweep=sweep, point=points[index], output=output,
                                   runner=run_point)
    click.echo(f"point {index} {record.state.value}"
               + (f": {record.reason}" if record.reason else ""))
    if record.state is PointState.FAILED:
        raise SweepFailedError(f"point {index} failed: {record.reason}")


@sweep_group.command("report")
@click.argument("directory", type=click.Path(path_type=Path, file_okay=False, exists=True))
@json_option
def report_command(directory: Path, as_json: bool) -> None:
    """Table, Pareto frontiers, plots and an HTML page for the sweep in DIRECTORY."""
    report = make_report(directory)
    if as_json:
        click.echo(json.dumps(report.data, indent=2))
        return
    out = Console()
    (out if out.is_terminal else Console(width=PIPED_WIDTH)).print(rich_table(report.grid))
    for line in report.data["headlines"]:
        click.echo(f"  - {line}")
    click.echo(f"report: {report.html}")
