"""Pod autoscaling fidelity: does a replay's real HPA reproduce the recorded replica curve?

``python -m benchmarks fidelity_hpa`` brings up an environment with the services and
metrics-server over KWOK's emulated usage, sets the timers to production at speed 1, and runs
a Deployment under an autoscaling/v2 HPA (CPU target 50 %) whose load rises and falls
(``fidelity_hpa_load``) while sk-tracer records it with usage sampling on and the results
recorder measures it: the truth. The trace is replayed as Simulations (HPAs active) at each
speed; then, in an environment of its own with a node autoscaler, as recorded and with the
HPA's target edited to 80 % (``skctl trace edit``) at the highest speed: the what-if
(``fidelity_hpa_whatif``), shown by ``skctl compare``. Figures (JSON lines): per replay the
area between its desired and current replica curves and the truth's, relative to the truth's
(``simkube.report.step_difference``, the definition ``curve_difference`` uses), and the scale
events of each; for the what-if, replicas, nodes and cost of both. Every environment goes
down at the end, also on failure. Method and results: docs/fidelity.md, "Pod autoscaling
(HPA)".

Settings: ``SIMKUBE_FIDELITY_HPA_MINUTES`` (default 7), ``SIMKUBE_FIDELITY_HPA_SPEEDS``
(default ``1,10``) and ``SIMKUBE_FIDELITY_HPA_REPETITIONS`` (replays of the one truth per
speed, default 1: repetitions show how much of a difference is the replay's own noise); the
what-if's autoscaler: ``SIMKUBE_FIDELITY_AUTOSCALER``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks import fidelity_hpa_load as load
from benchmarks.fidelity_hpa_runs import TIMERS, curve, hpa_summary, replay
from benchmarks.fidelity_hpa_whatif import what_if
from benchmarks.fidelity_replay import ReplayError, env_down, skctl
from benchmarks.fidelity_truth import Tracer
from simkube.core.kubeapi import KubeClient
from simkube.core.logs import configure_logging
from simkube.core.simtime import REAL_TIME
from simkube.env import retiming
from simkube.report import step_difference
from simkube.results import Recorder
from simkube.simulation.timers import timer_sections, timer_settings

TRACER_CONFIG = f"""\
trackedObjects:
  apps/v1.Deployment: {{podSpecTemplatePaths: [/spec/template], trackLifecycle: true}}
  autoscaling/v2.HorizontalPodAutoscaler: {{}}
namespaces: [{load.NAMESPACE}]
usage: {{period: 5s}}
"""


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


async def _record(kubeconfig: Path, run_dir: Path, duration_s: float) -> float:
    kube = await KubeClient.connect(kubeconfig=kubeconfig)
    try:
        await load.set_up(kube)
        loop = asyncio.get_running_loop()
        started, started_unix = loop.time(), time.time()
        recorder = Recorder(kube=kube, run_dir=run_dir, simulation="hpa-truth", run=1,
                            namespace_prefix=load.PREFIX, groups={},
                            trace_clock=lambda: time.time() - started_unix, scale=REAL_TIME)
        await recorder.start()
        try:
            await load.drive(kube, duration_s=duration_s, started=started,
                             on_tick=lambda t, cpu, pods: _log(
                                 f"  t+{t:5.0f}s  load {cpu:4d}m over {pods} running pod(s)"))
        except BaseException:
            await recorder.stop(state="Failed")
            raise
        await recorder.stop(state="Finished")
        await load.tear_down(kube)
    finally:
        await kube.close()
    return started_unix


def _truth(env: str, work: Path, duration_s: float) -> Path:
    kubeconfig = Path(skctl("env", "kubeconfig", "--name", env).strip())
    with contextlib.ExitStack() as cleanup:
        retiming.retime(env, scale=REAL_TIME, settings=timer_settings(timer_sections(TIMERS)))
        cleanup.callback(retiming.restore, env)
        tracer = Tracer(kubeconfig=str(kubeconfig), workdir=work, config_text=TRACER_CONFIG,
                        namespace=load.NAMESPACE)
        cleanup.callback(tracer.stop)
        tracer.wait_watching()
        _log(f"ground truth: {duration_s:g} s at speed 1")
        started = asyncio.run(_record(kubeconfig, work / "truth" / "run-1", duration_s))
        tracer.export(start=started, end=started + duration_s, output=work / "truth.trace")
    return work / "truth" / "run-1"


def compare(truth: Path, replay: Path, *, end_s: float) -> dict[str, Any]:
    """The replay's replica curves against the truth's, and both runs' scale events."""
    t_times, t_desired, t_current = curve(truth)
    r_times, r_desired, r_current = curve(replay)
    figures: dict[str, Any] = {}
    for column, a, b in (("desired", t_desired, r_desired), ("current", t_current, r_current)):
        difference = step_difference(a_times=[*t_times, end_s], a_values=[*a, a[-1]],
                                     b_times=[*r_times, end_s], b_values=[*b, b[-1]],
                                     column=column)
        figures[f"{column}_difference_pct"] = round(difference.relative * 100, 1)
        figures[f"{column}_max_abs"] = difference.max_abs
    truth_hpa = hpa_summary(truth, end_s=end_s)
    replay_hpa = hpa_summary(replay, end_s=end_s)
    figures.update({"truth_scale_events": truth_hpa["scale_events"],
                    "replay_scale_events": replay_hpa["scale_events"],
                    "truth_mean_replicas": truth_hpa["mean_desired"],
                    "replay_mean_replicas": replay_hpa["mean_desired"],
                    "truth_peak": truth_hpa["peak_desired"],
                    "replay_peak": replay_hpa["peak_desired"]})
    figures["within"] = (figures["desired_difference_pct"] <= 10.0
                         and figures["truth_scale_events"] == figures["replay_scale_events"])
    return figures


def _settings() -> tuple[float, tuple[float, ...], int]:
    minutes = float(os.environ.get("SIMKUBE_FIDELITY_HPA_MINUTES", "7"))
    speeds = tuple(float(s) for s in os.environ.get("SIMKUBE_FIDELITY_HPA_SPEEDS", "1,10")
                   .split(","))
    repetitions = int(os.environ.get("SIMKUBE_FIDELITY_HPA_REPETITIONS", "1"))
    if minutes < 3 or not speeds or min(speeds) <= 0 or repetitions < 1:
        raise ValueError("SIMKUBE_FIDELITY_HPA_MINUTES must be >= 3, the speeds > 0 and "
                         "SIMKUBE_FIDELITY_HPA_REPETITIONS >= 1")
    return minutes, speeds, repetitions


def run() -> Iterator[dict[str, Any]]:
    configure_logging()
    try:
        minutes, speeds, repetitions = _settings()
    except ValueError as exc:
        yield {"figure": "fidelity_hpa", "ran": False, "reason": str(exc)}
        return
    duration_s = minutes * 60
    env = f"bench-hpa-{os.getpid()}"
    work = Path(tempfile.mkdtemp(prefix="simkube-fidelity-hpa-"))
    _log(f"fidelity_hpa: trace, truth and results in {work}")
    started = time.monotonic()
    down = False
    try:
        skctl("env", "up", "--name", env, "--services", "--metrics-server", show=True)
        truth = _truth(env, work, duration_s)
        summary = hpa_summary(truth, end_s=duration_s)
        yield {"figure": "fidelity_hpa.truth", "minutes": minutes, "timers": list(TIMERS),
               **summary, "results": str(truth), "trace": str(work / "truth.trace")}
        for repetition in range(1, repetitions + 1):
            for speed in speeds:
                name = "hpa-x" + f"{speed:g}".replace(".", "-") + f"-r{repetition}"
                try:
                    results = replay(env, name=name, trace=work / "truth.trace",
                                     speed=speed, duration_s=duration_s)
                except ReplayError as exc:
                    yield {"figure": "fidelity_hpa.replay", "speed": speed,
                           "repetition": repetition, "ran": False, "reason": str(exc)}
                    continue
                yield {"figure": "fidelity_hpa.replay", "speed": speed,
                       "repetition": repetition,
                       **compare(truth, results, end_s=duration_s), "results": str(results)}
        # the what-if brings up an environment of its own: this one goes down first
        env_down(env)
        down = True
        yield from what_if(work, speed=max(speeds), duration_s=duration_s)
        yield {"figure": "fidelity_hpa.wall_seconds", "value": round(time.monotonic() - started)}
    finally:
        if not down:
            env_down(env)

