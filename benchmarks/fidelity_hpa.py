"""Pod autoscaling fidelity: does a replay's real HPA reproduce the recorded replica curve?

``python -m benchmarks fidelity_hpa`` brings up an environment with the services and
metrics-server over KWOK's emulated usage, sets the timers to production at speed 1, and runs
a Deployment under an autoscaling/v2 HPA (CPU target 50 %) whose load rises and falls
(``fidelity_hpa_load``) while sk-tracer records it with usage sampling on and the results
recorder measures it: the truth. The trace is replayed as Simulations (HPAs active) at each
speed, and once more with the HPA's target edited to 80 % (``skctl trace edit``) at the
highest speed: the what-if, shown by ``skctl compare``. Figures (JSON lines): per replay the
area between its desired and current replica curves and the truth's, relative to the truth's
(``simkube.report.step_difference``, the definition ``curve_difference`` uses), and the scale
events of each. The environment goes down at the end, also on failure. Method and results:
docs/fidelity.md, "Pod autoscaling (HPA)".

Settings: ``SIMKUBE_FIDELITY_HPA_MINUTES`` (default 7) and ``SIMKUBE_FIDELITY_HPA_SPEEDS``
(default ``1,10``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks import fidelity_hpa_load as load
from benchmarks.fidelity_replay import SKCTL, ReplayError, skctl
from benchmarks.fidelity_truth import Tracer
from simkube.core.kubeapi import KubeClient
from simkube.core.logs import configure_logging
from simkube.core.simtime import REAL_TIME
from simkube.env import retiming
from simkube.report import step_difference
from simkube.results import Recorder, hpas
from simkube.simulation.timers import timer_sections, timer_settings

# A 60 s downscale stabilization (production: 300 s) lets a 7-minute truth scale down as well
# as up; the truth and every replay use it (replays divide it by their speed).
TIMERS = ("controllerManager.horizontal-pod-autoscaler-downscale-stabilization=60s",)
TRACER_CONFIG = f"""\
trackedObjects:
  apps/v1.Deployment: {{podSpecTemplatePaths: [/spec/template], trackLifecycle: true}}
  autoscaling/v2.HorizontalPodAutoscaler: {{}}
namespaces: [{load.NAMESPACE}]
usage: {{period: 5s}}
"""
WHAT_IF_TARGET = 80
RUN_OVERHEAD_S = 300.0


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


def _run(env: str, *, name: str, trace: Path, speed: float, duration_s: float) -> Path:
    budget = duration_s / speed + RUN_OVERHEAD_S
    skctl("run", "--env", env, "--name", name, "--trace", str(trace), "--speed", f"{speed:g}",
          "--duration", f"{round(duration_s)}s", "--hpa", "active",
          *(f"--timer={timer}" for timer in TIMERS),
          "--wait", "--timeout", f"{budget:.0f}", timeout=budget + 120, show=True)
    status = json.loads(skctl("status", name, "--env", env, "--json"))["status"]
    runs = [Path(r["resultsDir"]) for r in status.get("runs", []) if r.get("state") == "Finished"]
    if not runs:
        raise ReplayError(f"{name}: no run finished ({status.get('message', status.get('state'))})")
    return runs[-1]


def _curve(run_dir: Path) -> tuple[list[float], list[int], list[int]]:
    rows = [r for r in hpas.read(run_dir / hpas.HPAS) if r.hpa.endswith(f"/{load.NAME}")
            and r.desired > 0]
    if not rows:
        raise ReplayError(f"{run_dir}: the HPA {load.NAME} never decided anything "
                          "(no hpas.csv rows)")
    return [r.trace_s for r in rows], [r.desired for r in rows], [r.current for r in rows]


def compare(truth: Path, replay: Path, *, end_s: float) -> dict[str, Any]:
    """The replay's replica curves against the truth's, and both runs' scale events."""
    t_times, t_desired, t_current = _curve(truth)
    r_times, r_desired, r_current = _curve(replay)
    figures: dict[str, Any] = {}
    for column, a, b in (("desired", t_desired, r_desired), ("current", t_current, r_current)):
        difference = step_difference(a_times=[*t_times, end_s], a_values=[*a, a[-1]],
                                     b_times=[*r_times, end_s], b_values=[*b, b[-1]],
                                     column=column)
        figures[f"{column}_difference_pct"] = round(difference.relative * 100, 1)
        figures[f"{column}_max_abs"] = difference.max_abs
    truth_hpa = _summary(truth, end_s=end_s)
    replay_hpa = _summary(replay, end_s=end_s)
    figures.update({"truth_scale_events": truth_hpa["scale_events"],
                    "replay_scale_events": replay_hpa["scale_events"],
                    "truth_mean_replicas": truth_hpa["mean_desired"],
                    "replay_mean_replicas": replay_hpa["mean_desired"],
                    "truth_peak": truth_hpa["peak_desired"],
                    "replay_peak": replay_hpa["peak_desired"]})
    figures["within"] = (figures["desired_difference_pct"] <= 10.0
                         and figures["truth_scale_events"] == figures["replay_scale_events"])
    return figures


def _summary(run_dir: Path, *, end_s: float) -> dict[str, Any]:
    """The HPA's figures from the run's hpas.csv, over trace time up to ``end_s``."""
    return _one(hpas.summaries(hpas.read(run_dir / hpas.HPAS), end_trace_s=end_s))


def _one(summaries: Any) -> dict[str, Any]:
    found = [v for k, v in summaries.items() if k.endswith(f"/{load.NAME}")]
    if not found:
        raise ReplayError(f"no HPA {load.NAME} in the summary ({sorted(summaries)})")
    return dict(found[0])


def _settings() -> tuple[float, tuple[float, ...]]:
    minutes = float(os.environ.get("SIMKUBE_FIDELITY_HPA_MINUTES", "7"))
    speeds = tuple(float(s) for s in os.environ.get("SIMKUBE_FIDELITY_HPA_SPEEDS", "1,10")
                   .split(","))
    if minutes < 3 or not speeds or min(speeds) <= 0:
        raise ValueError("SIMKUBE_FIDELITY_HPA_MINUTES must be >= 3 and the speeds > 0")
    return minutes, speeds


def run() -> Iterator[dict[str, Any]]:
    configure_logging()
    try:
        minutes, speeds = _settings()
    except ValueError as exc:
        yield {"figure": "fidelity_hpa", "ran": False, "reason": str(exc)}
        return
    duration_s = minutes * 60
    env = f"bench-hpa-{os.getpid()}"
    work = Path(tempfile.mkdtemp(prefix="simkube-fidelity-hpa-"))
    _log(f"fidelity_hpa: trace, truth and results in {work}")
    started = time.monotonic()
    try:
        skctl("env", "up", "--name", env, "--services", "--metrics-server", show=True)
        truth = _truth(env, work, duration_s)
        summary = _summary(truth, end_s=duration_s)
        yield {"figure": "fidelity_hpa.truth", "minutes": minutes, "timers": list(TIMERS),
               **summary, "results": str(truth), "trace": str(work / "truth.trace")}
        replays: dict[float, Path] = {}
        for speed in speeds:
            name = "hpa-x" + f"{speed:g}".replace(".", "-")
            try:
                replays[speed] = _run(env, name=name, trace=work / "truth.trace", speed=speed,
                                      duration_s=duration_s)
            except ReplayError as exc:
                yield {"figure": "fidelity_hpa.replay", "speed": speed, "ran": False,
                       "reason": str(exc)}
                continue
            yield {"figure": "fidelity_hpa.replay", "speed": speed,
                   **compare(truth, replays[speed], end_s=duration_s),
                   "results": str(replays[speed])}
        yield from _what_if(env, work, speed=max(speeds), duration_s=duration_s,
                            baseline=replays.get(max(speeds)))
        yield {"figure": "fidelity_hpa.wall_seconds", "value": round(time.monotonic() - started)}
    finally:
        down = subprocess.run([SKCTL, "env", "down", "--name", env], check=False,
                              capture_output=True, text=True, timeout=300)
        if down.returncode != 0:
            _log(f"env down --name {env} failed: {down.stderr.strip()}")


def _what_if(env: str, work: Path, *, speed: float, duration_s: float,
             baseline: Path | None) -> Iterator[dict[str, Any]]:
    edited = work / f"target-{WHAT_IF_TARGET}.trace"
    skctl("trace", "edit", str(work / "truth.trace"), str(edited),
          "--hpa", f"{load.NAMESPACE}/{load.NAME}", "--hpa-cpu-target", str(WHAT_IF_TARGET),
          show=True)
    name = f"hpa-target{WHAT_IF_TARGET}-x" + f"{speed:g}".replace(".", "-")
    try:
        run_dir = _run(env, name=name, trace=edited, speed=speed, duration_s=duration_s)
    except ReplayError as exc:
        yield {"figure": "fidelity_hpa.what_if", "ran": False, "reason": str(exc)}
        return
    edited_hpa = _summary(run_dir, end_s=duration_s)
    figure: dict[str, Any] = {"figure": "fidelity_hpa.what_if", "target_percent": WHAT_IF_TARGET,
                              "speed": speed, **edited_hpa, "results": str(run_dir)}
    if baseline is not None:
        base = _summary(baseline, end_s=duration_s)
        figure["baseline_mean_replicas"] = base["mean_desired"]
        figure["baseline_peak"] = base["peak_desired"]
        out = work / "compare"
        said = skctl("compare", f"{baseline.parent.name}/{baseline.name}",
                     f"{run_dir.parent.name}/{run_dir.name}", "--env", env,
                     "--output", str(out))
        _log(said)
        figure["compare_output"] = str(out)
    yield figure
