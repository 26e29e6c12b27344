"""``skctl report`` and ``skctl compare``: what happened in a simulation, and what changed.

Thin commands: they resolve names to result directories (``simkube.report.locate``), load
runs, and hand them to ``simkube.report.render``; the table goes to stdout with rich, or the
computed summary as JSON with ``--json``. Every user error (unknown simulation or run,
unreadable results, unwritable output) is a ``ConfigError``: a message and exit code 2.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import click
from rich.console import Console

from simkube.core.errors import ConfigError
from simkube.report import locate
from simkube.report.loading import RunData, load
from simkube.report.render import Rendered, make_comparison, make_report
from simkube.report.tables import rich_table
from simkube.skctl.cluster_options import env_option, json_option, kubeconfig_option

status_console = Console(stderr=True)
_results_option = click.option(
    "--results", type=click.Path(path_type=Path, file_okay=False),
    help="Results root (sk-ctrl's --results-dir) or a simulation's results directory; "
         "default: the Simulation's status.resultsDir, else the local env's results.")
_output_option = click.option("--output", type=click.Path(path_type=Path, file_okay=False),
                              help="Where the plots and the HTML page go.")


@click.command("report")
@click.argument("name")
@click.option("--run", "run_number", type=click.IntRange(min=1),
              help="Run to report on (default: the latest).")
@click.option("--all", "all_runs", is_flag=True, help="Overlay every repetition.")
@_results_option
@_output_option
@kubeconfig_option
@env_option
@json_option
def report_command(name: str,  # noqa: PLR0917  # click passes every option as a parameter
                   run_number: int | None, all_runs: bool, results: Path | None,
                   output: Path | None, kubeconfig: Path | None, env_name: str | None,
                   as_json: bool) -> None:
    """Summary table, PNG plots and one HTML page for simulation NAME."""
    ref = locate.parse_ref(name)
    if ref.run is not None and run_number not in (None, ref.run):
        raise ConfigError(f"{name} names run {ref.run} but --run says {run_number}")
    run_number = run_number or ref.run
    if all_runs and run_number is not None:
        raise ConfigError("--run and --all exclude each other")
    directory = locate.simulation_dir(name=ref.simulation, results=results,
                                      kubeconfig=kubeconfig, env=env_name)
    if all_runs:
        runs = [_load(directory, run) for run in locate.run_numbers(directory)]
        target = output or directory / "report"
    else:
        run_dir = locate.run_dir(directory, run=run_number)
        runs = [load(run_dir, label=f"{ref.simulation}/{run_dir.name}")]
        target = output or run_dir / "report"
    rendered = _render(lambda: make_report(runs, output=target), target=target)
    _show(rendered, as_json=as_json)


@click.command("compare")
@click.argument("refs", nargs=-1, required=True, metavar="A B [C ...]")
@click.option("--threshold", type=click.FloatRange(min=0), default=5.0, show_default=True,
              help="Call out metrics and curves that differ by more than this many percent.")
@_results_option
@_output_option
@kubeconfig_option
@env_option
@json_option
def compare_command(refs: tuple[str, ...],  # noqa: PLR0917  # click passes every option
                    threshold: float, results: Path | None,
                    output: Path | None, kubeconfig: Path | None, env_name: str | None,
                    as_json: bool) -> None:
    """Compare runs side by side; A, B ... are NAME (latest run) or NAME/run-N."""
    if len(refs) < 2:
        raise ConfigError("compare needs at least two runs", hint="skctl compare A B")
    parsed = [locate.parse_ref(text) for text in refs]
    directories = {ref.simulation: locate.simulation_dir(name=ref.simulation, results=results,
                                                         kubeconfig=kubeconfig, env=env_name)
                   for ref in parsed}
    runs = [_load(directories[ref.simulation], ref.run) for ref in parsed]
    slug = "_vs_".join(run.label.replace("/", "-") for run in runs)
    target = output or directories[parsed[0].simulation] / "compare" / slug[:200]
    rendered = _render(lambda: make_comparison(runs, output=target, threshold=threshold / 100),
                       target=target)
    _show(rendered, as_json=as_json)


def _load(directory: Path, run: int | None) -> RunData:
    run_dir = locate.run_dir(directory, run=run)
    return load(run_dir, label=f"{directory.name}/{run_dir.name}")


def _render(make: Callable[[], Rendered], *, target: Path) -> Rendered:
    try:
        with status_console.status(f"rendering into {target}"):
            return make()
    except OSError as exc:
        raise ConfigError(f"cannot write the report into {target}: {exc.strerror or exc}",
                          hint="pass --output DIR with a writable directory") from None


def _show(rendered: Rendered, *, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(rendered.data, indent=2))
        return
    console = Console()
    console.print(rich_table(rendered.grid))
    if rendered.callouts is not None:
        console.print("[bold]differences[/]" if rendered.callouts else
                      "[bold]differences:[/] none above the threshold")
        for text in rendered.callouts:
            click.echo(f"  - {text}")
    # Plain echo: rich would wrap long paths, and scripts grep for "report: <path>".
    for line in rendered.headlines:
        click.echo(f"  {line}")
    click.echo(f"report: {rendered.html}")
