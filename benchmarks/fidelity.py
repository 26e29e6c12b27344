"""Replay fidelity against a ground truth: how fast can a replay run and still tell the truth?

``python -m benchmarks fidelity`` (part of ``make bench``) brings up a fresh environment with
the services and an autoscaler (``fidelity_autoscaler``: Cluster Autoscaler, or Karpenter with
``SIMKUBE_FIDELITY_AUTOSCALER=karpenter``), sets every timer to its production value at speed
1 (``simkube.env.retiming``), and runs a workload (``fidelity_workload``) in real time while
sk-tracer records it and the results recorder measures it: the ground truth. The recording is
then replayed as Simulations at each speed, R times each, and every run is compared with the
truth on the trace-time axis (``fidelity_figures``). JSON lines on stdout, progress on stderr;
the environment goes down at the end, also on failure. Settings: ``fidelity_settings``
(``SIMKUBE_FIDELITY_*``).

Without the autoscaler's binary it prints one line saying so and stops: nodes that cannot
scale would make every figure meaningless. Every line names the autoscaler and its version.
Method and results: docs/fidelity.md.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

from benchmarks import fidelity_figures as figures
from benchmarks import fidelity_node_groups as node_groups
from benchmarks import fidelity_settings
from benchmarks.fidelity_autoscaler import Autoscaler, prepare
from benchmarks.fidelity_plot import draw
from benchmarks.fidelity_replay import ReplayError, env_down, replay, skctl
from benchmarks.fidelity_truth import Tracer, record_truth
from simkube.cloudprov.config import load_file
from simkube.core.errors import EnvironmentStateError
from simkube.core.logs import configure_logging
from simkube.core.simtime import REAL_TIME
from simkube.env import retiming
from simkube.results import load_run

console = Console(stderr=True, soft_wrap=True)
DOCS = Path(__file__).resolve().parents[1] / "docs"


@contextlib.contextmanager
def _clock_bar(description: str, seconds: float) -> Iterator[None]:
    """A progress bar on stderr that fills with wall time (the truth cannot go faster)."""
    with Progress(TextColumn("{task.description}"), BarColumn(), TimeRemainingColumn(),
                  console=console, transient=True) as progress:
        task = progress.add_task(description, total=seconds)
        started, done = time.monotonic(), threading.Event()

        def tick() -> None:
            while not done.wait(1.0):
                progress.update(task, completed=min(time.monotonic() - started, seconds))
        ticker = threading.Thread(target=tick, daemon=True)
        ticker.start()
        try:
            yield
        finally:
            done.set()
            ticker.join()


def _truth(env: str, work: Path, settings: fidelity_settings.Settings,
           groups: Path) -> dict[str, Any]:
    kubeconfig = Path(skctl("env", "kubeconfig", "--name", env).strip())
    prices = {g.id: g.price_per_hour for g in load_file(groups).groups.values()}
    with contextlib.ExitStack() as cleanup:
        restarted = retiming.retime(env, scale=REAL_TIME, settings=settings.timer_settings)
        cleanup.callback(retiming.restore, env)
        tracer = Tracer(kubeconfig=str(kubeconfig), workdir=work)
        cleanup.callback(tracer.stop)
        tracer.wait_watching()
        console.rule(f"ground truth: {settings.minutes:g} min at speed 1, timers: "
                     f"{', '.join(settings.timers) or 'production defaults'}")
        with _clock_bar("ground truth", settings.duration_s):
            started, summary = record_truth(
                kubeconfig=kubeconfig, run_dir=work / "truth" / "run-1",
                duration_s=settings.duration_s, prices=prices,
                on_step=lambda step: console.print(
                    f"  t+{step.at_s:5.0f}s  {step.note:32} "
                    + " ".join(f"{k}={v}" for k, v in step.replicas.items())))
        tracer.export(start=started, end=started + settings.duration_s,
                      output=work / "truth.trace")
    return {"timers_restarted": restarted, "truth_state": summary.state}


def _replays(env: str, work: Path, settings: fidelity_settings.Settings,
             autoscaler: Autoscaler) -> Iterator[dict[str, Any]]:
    label = autoscaler.label
    truth = load_run(work / "truth" / "run-1")
    yield {**label, "figure": "fidelity.truth", **figures.headlines(truth),
           "timers": list(settings.timers) or "production defaults",
           "results": str(truth.run_dir), "trace": str(work / "truth.trace")}
    worst: dict[float, dict[str, figures.Value]] = {}
    for speed in settings.speeds:
        console.rule(f"replay at {speed:g}x, {settings.repetitions} run(s)")
        try:
            runs = replay(env=env, trace=work / "truth.trace", speed=speed,
                          repetitions=settings.repetitions, duration_s=settings.duration_s,
                          timers=settings.timers)
        except ReplayError as exc:
            worst[speed] = dict.fromkeys(figures.RELATIVE)
            yield {**label, "figure": "fidelity.run", "speed": speed, "ran": False,
                   "reason": str(exc)}
            continue
        compared = [figures.compare(truth=truth, replay=load_run(run), speed=speed,
                                    repetition=index) for index, run in enumerate(runs, 1)]
        for comparison, run in zip(compared, runs, strict=True):
            yield {**label, "figure": "fidelity.run", "speed": speed,
                   "repetition": comparison.repetition,
                   "summary": figures.describe(comparison.errors),
                   **figures.as_json(comparison), "results": str(run)}
        worst[speed] = figures.worst(compared)
        yield {**label, "figure": "fidelity.speed", "speed": speed, "repetitions": len(runs),
               "summary": figures.describe(worst[speed]),
               **{f"{name}_pct": figures.percent(value) for name, value in worst[speed].items()},
               "within": figures.within(worst[speed])}
    best, missed = figures.highest_speed(worst)
    yield {**label, "figure": "fidelity.highest_speed", "value": best, "first_miss": missed,
           "limits_pct": {name: limit * 100 for name, limit in figures.LIMITS.items()},
           "speeds": list(settings.speeds), "repetitions": settings.repetitions}
    yield from _against_spread(label, worst)
    plot = (DOCS if settings.write_docs else work) / autoscaler.plot_name
    title = (f"{label['autoscaler']} {label['autoscaler_version']}: "
             f"{settings.minutes:g}-minute workload, worst of {settings.repetitions}")
    yield {**label, "figure": "fidelity.plot",
           "path": str(draw(worst_by_speed=worst, path=plot, title=title))}


def _against_spread(label: dict[str, Any],
                    worst: dict[float, dict[str, figures.Value]]) -> Iterator[dict[str, Any]]:
    """With speed 1 among the speeds: how far the truth is from itself (its 1x replays), and
    the highest speed no farther from the truth than that, or than the limits where they are
    wider. Reported beside ``fidelity.highest_speed``, which keeps the fixed limits."""
    if 1.0 not in worst:
        return
    limits = figures.spread_limits(worst[1.0])
    spread = {f"{name}_pct": figures.percent(worst[1.0].get(name)) for name in figures.LIMITS}
    best, missed = (figures.highest_speed(worst, limits) if limits is not None
                    else (None, "speed 1: a figure is missing"))
    yield {**label, "figure": "fidelity.highest_speed_within_spread", "value": best,
           "first_miss": missed, "spread_pct": spread,
           "limits_pct": ({name: round(limit * 100, 1) for name, limit in limits.items()}
                          if limits is not None else None)}


def run() -> Iterator[dict[str, Any]]:
    configure_logging()  # the retiming and the recorder log in this process: to stderr
    label: dict[str, Any] = {"autoscaler": None, "autoscaler_version": None}
    try:  # which autoscaler first, so that even a wrong setting's line names it
        kind = fidelity_settings.autoscaler(os.environ)
        label["autoscaler"] = kind.value
        autoscaler = prepare(kind)
        label = autoscaler.label
        settings = fidelity_settings.from_environ(os.environ)
    except (EnvironmentStateError, fidelity_settings.SettingsError) as exc:
        yield {**label, "figure": "fidelity", "ran": False, "reason": str(exc)}
        return
    if autoscaler.warning:
        console.print(f"[yellow]warning:[/] {autoscaler.warning}")
    env = f"bench-fid-{os.getpid()}"
    work = Path(tempfile.mkdtemp(prefix=f"simkube-fidelity-{kind.value}-"))
    console.print(f"fidelity benchmark: trace, truth and plot in {work}", soft_wrap=True)
    started = time.monotonic()
    try:
        groups = node_groups.write(workdir=work)
        skctl("env", "up", "--name", env, "--services", *autoscaler.up_args,
              "--node-groups", str(groups), show=True)
        truth = _truth(env, work, settings, groups)
        yield {**label, "figure": "fidelity.setup", "minutes": settings.minutes,
               "speeds": list(settings.speeds), "repetitions": settings.repetitions,
               **autoscaler.setup, "workdir": str(work),
               "group_max_sizes": dict(node_groups.max_sizes()), **truth}
        yield from _replays(env, work, settings, autoscaler)
        yield {**label, "figure": "fidelity.wall_seconds",
               "value": round(time.monotonic() - started, 1)}
    finally:
        env_down(env, keep_logs=work / "logs")
