"""``skctl check``: the CI gate; a run against a baseline, exit 1 when a figure regressed.

Thin: it turns what the user named (a run directory, a Simulation's results directory, a
Simulation by name, a committed baseline file, or a trace to replay now through the code of
``skctl run --wait``) into samples, and hands them to ``simkube.check`` to judge and render.
Everything a user can get wrong (an unreadable baseline or thresholds file, unknown runs) is
a ``ConfigError``, exit 2, found before anything is replayed or written. docs/ci.md.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import click
from rich.console import Console

from simkube.check.baseline import read_baseline, write_baseline
from simkube.check.figures import Sample, read_runs
from simkube.check.judging import Outcome, judge
from simkube.check.junit import write_junit
from simkube.check.rendering import headline, json_data, markdown, rich_table
from simkube.check.thresholds import load_thresholds
from simkube.core.cli import SPEED
from simkube.core.errors import ConfigError, SimkubeError
from simkube.core.simtime import TimeScale
from simkube.report import locate
from simkube.skctl import sim_commands, sim_manifest
from simkube.skctl.cluster_options import env_option, json_option, kubeconfig_option

EXIT_REGRESSION = 1
STEP_SUMMARY = "GITHUB_STEP_SUMMARY"


class ReplayFailedError(SimkubeError, exit_code=2):
    """The trace ``--trace`` replayed ended Failed: there are no runs to judge."""


def run_dirs(text: str, *, kubeconfig: Path | None, env: str | None) -> tuple[str, list[Path]]:
    """A label and the runs ``text`` names: a run directory, a Simulation's results
    directory (all its runs: repetitions), ``NAME`` (all runs) or ``NAME/run-N``."""
    path = Path(text)
    if path.is_dir():
        if (path / "summary.json").is_file():
            return f"{path.resolve().parent.name}/{path.name}", [path]
        numbers = locate.run_numbers(path)
        if not numbers:
            raise ConfigError(f"{path} is neither a run directory (no summary.json) nor a "
                              "Simulation's results directory (no run-N directories)")
        return path.resolve().name, [path / f"run-{n}" for n in numbers]
    if path.exists():
        raise ConfigError(f"{path} is a file: only --baseline may be a baseline file")
    ref = locate.parse_ref(text)
    directory = locate.simulation_dir(name=ref.simulation, results=None,
                                      kubeconfig=kubeconfig, env=env)
    if ref.run is not None:
        return text, [locate.run_dir(directory, run=ref.run)]
    return ref.simulation, [directory / f"run-{n}" for n in locate.run_numbers(directory)]


def read_sample(texts: tuple[str, ...], *, kubeconfig: Path | None, env: str | None) -> Sample:
    """The runs ``texts`` name, pooled as repetitions of one experiment."""
    labels, dirs = [], []
    for text in texts:
        label, found = run_dirs(text, kubeconfig=kubeconfig, env=env)
        labels.append(label)
        dirs += found
    return read_runs(dirs, label=" + ".join(labels))


def replay(*, trace: Path, speed: TimeScale | None, repetitions: int | None,
           duration: str | None, name: str | None, timeout: float | None,
           kubeconfig: Path | None, env: str | None) -> tuple[str, list[Path]]:
    """Replay ``trace`` now as ``skctl run --wait`` does; the Simulation's runs."""
    simulation = sim_manifest.from_flags(sim_manifest.RunFlags(
        name=name, trace=str(trace), speed=speed, repetitions=repetitions, duration=duration))
    try:
        # Progress and the final details on stderr: stdout is the verdict (--markdown, --json).
        sim_commands.create_simulation(simulation, wait=True, timeout=timeout,
                                       kubeconfig=kubeconfig, env_name=env,
                                       details=Console(stderr=True))
    except sim_commands.SimulationFailedError as exc:
        # skctl run exits 1 for it; here 1 means "a regression", and there is nothing to judge.
        raise ReplayFailedError(exc.message, hint=exc.hint) from None
    return run_dirs(simulation["metadata"]["name"], kubeconfig=kubeconfig, env=env)


@click.command("check")
@click.argument("candidate", nargs=-1, metavar="[CANDIDATE ...]")
@click.option("--baseline", help="Run directory, Simulation results directory or name, or a "
                                 "baseline figures file (--write-baseline).")
@click.option("--thresholds", type=click.Path(path_type=Path, dir_okay=False),
              help="Thresholds YAML (default: the shipped ones, docs/ci.md).")
@click.option("--write-baseline", type=click.Path(path_type=Path, dir_okay=False),
              help="Write the CANDIDATE runs' figures to this file (YAML; JSON if *.json) "
                   "instead of checking.")
@click.option("--markdown", "as_markdown", is_flag=True,
              help=f"Print Markdown (and append it to ${STEP_SUMMARY} when set).")
@click.option("--junit", type=click.Path(path_type=Path, dir_okay=False),
              help="Also write a JUnit XML report here.")
@click.option("--trace", type=click.Path(path_type=Path, dir_okay=False),
              help="Replay this trace now (as 'skctl run --wait') and check its runs.")
@click.option("--speed", type=SPEED, help="With --trace: replay speed [default: 1].")
@click.option("--repetitions", type=click.IntRange(1, 100), help="With --trace: runs.")
@click.option("--duration", help="With --trace: trace time to replay [default: all].")
@click.option("--name", help="With --trace: the Simulation's name.")
@click.option("--timeout", type=click.FloatRange(min=1), help="With --trace: give up after "
                                                               "SECONDS.")
@kubeconfig_option
@env_option
@json_option
@click.pass_context
def check_command(  # noqa: PLR0917  # click passes every option as a parameter
        ctx: click.Context, candidate: tuple[str, ...], baseline: str | None,
        thresholds: Path | None, write_baseline: Path | None, as_markdown: bool,
        junit: Path | None, trace: Path | None, speed: TimeScale | None,
        repetitions: int | None, duration: str | None, name: str | None,
        timeout: float | None, kubeconfig: Path | None, env_name: str | None,
        as_json: bool) -> None:
    """Check CANDIDATE (runs, or --trace replayed now) against --baseline; exit 1 on a
    regression, 2 on bad input. With --write-baseline FILE, keep CANDIDATE's figures."""
    if bool(candidate) == (trace is not None):
        raise click.UsageError("give the runs to check (CANDIDATE) or --trace, one of them")
    if write_baseline is not None and baseline is not None:
        raise click.UsageError("--write-baseline and --baseline exclude each other")
    if write_baseline is None and baseline is None:
        raise click.UsageError("give --baseline to check against, or --write-baseline FILE")
    if as_json and as_markdown:
        raise click.UsageError("--json and --markdown exclude each other")
    if trace is None and any(v is not None for v in (speed, repetitions, duration, name,
                                                      timeout)):
        raise click.UsageError("--speed, --repetitions, --duration, --name and --timeout "
                               "go with --trace")
    # Every input file is read before anything is replayed or written.
    limits = load_thresholds(thresholds)
    base = None if baseline is None else read_baseline_or_runs(
        baseline, kubeconfig=kubeconfig, env=env_name)
    extra = {}
    if trace is not None:
        label, dirs = replay(trace=trace, speed=speed, repetitions=repetitions,
                             duration=duration, name=name, timeout=timeout,
                             kubeconfig=kubeconfig, env=env_name)
        sample = read_runs(dirs, label=label)
        extra = {"trace": str(trace)}
    else:
        sample = read_sample(candidate, kubeconfig=kubeconfig, env=env_name)
    if base is None:  # --write-baseline, then
        write_baseline_file(write_baseline, sample, extra=extra)
        return
    outcome = judge(baseline=base, candidate=sample, thresholds=limits)
    if junit is not None:
        write_junit(junit, outcome)
    show(outcome, as_json=as_json, as_markdown=as_markdown)
    if not outcome.passed:
        ctx.exit(EXIT_REGRESSION)


def read_baseline_or_runs(text: str, *, kubeconfig: Path | None, env: str | None) -> Sample:
    """A baseline figures file when ``text`` is a file, else runs as for CANDIDATE."""
    path = Path(text)
    if path.is_file():
        return read_baseline(path)
    return read_sample((text,), kubeconfig=kubeconfig, env=env)


def show(outcome: Outcome, *, as_json: bool, as_markdown: bool) -> None:
    if as_json:
        click.echo(json.dumps(json_data(outcome), indent=2))
    elif as_markdown:
        text = markdown(outcome)
        click.echo(text, nl=False)
        append_step_summary(text)
    else:
        out = Console()
        # Piped (a CI log), rich would squeeze the table into 80 columns and cut the cells.
        (out if out.is_terminal else Console(width=140)).print(rich_table(outcome))
        click.echo(headline(outcome))


def write_baseline_file(path: Path | None, sample: Sample, *, extra: dict[str, str]) -> None:
    if path is None:
        raise click.UsageError("give --baseline to check against, or --write-baseline FILE")
    write_baseline(path, sample, extra=extra)
    click.echo(f"baseline: {path} ({sample.label})")


def append_step_summary(text: str) -> None:
    """Append to the file GitHub Actions shows on the run's page, when there is one."""
    target = os.environ.get(STEP_SUMMARY)
    if not target:
        return
    try:
        with Path(target).open("a", encoding="utf-8") as out:
            out.write(text + "\n")
    except OSError as exc:
        raise ConfigError(f"cannot append to ${STEP_SUMMARY} ({target}): "
                          f"{exc.strerror or exc}") from None
