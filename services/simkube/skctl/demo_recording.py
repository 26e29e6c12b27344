"""The demo's first act: a "production" cluster running the shop, recorded by sk-tracer.

Production is its own local environment (``skctl env up --nodes 1 --metrics-server``: one
fake node big enough for the whole shop, and metrics-server over KWOK's emulated usage so the
shop's HPA reads real metrics), as a real cluster would be, so the replay that follows starts
from the simulated cluster's autoscaler and nothing of production's. The recording is the
shop's day played fast, so production's HPA and metrics-server run with their timers divided
by as much (``retiming``, as a Simulation's run does): every second of the recording is
``DAY_STRETCH / stretch`` seconds of the day for them too. sk-tracer records the shop's
objects, its HPA and its pods' usage every second (a sample is ``DAY_STRETCH / stretch``
seconds of the day once stretched). sk-tracer runs as a user would start it, and the commands
are echoed with a ``$`` like the rest of the demo.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console

from simkube.core.errors import SimkubeError
from simkube.core.kubeapi import KubeClient
from simkube.core.simtime import parse_speed
from simkube.env import ports, retiming
from simkube.simulation.timers import timer_sections, timer_settings
from simkube.skctl import demo_shop, demo_workload

BIN = Path(sys.executable).parent
console = Console()
TRACER_CONFIG = """\
trackedObjects:
  apps/v1.Deployment: {podSpecTemplatePaths: [/spec/template], trackLifecycle: true}
  batch/v1.CronJob: {podSpecTemplatePaths: [/spec/jobTemplate/spec/template],
                     trackLifecycle: true}
  autoscaling/v2.HorizontalPodAutoscaler: {}
namespaces: [shop]
usage: {period: 1s}
"""


def skctl(*args: str, capture: bool = False) -> str:
    """Run skctl as the user would, echoing the command; output streams unless captured."""
    console.print(f"[bold cyan]$ skctl {shlex.join(args)}[/]")
    result = subprocess.run([str(BIN / "skctl"), *args], text=True, check=False,
                            stdout=subprocess.PIPE if capture else None)
    if result.returncode != 0:
        raise SimkubeError(f"skctl {args[0]} {args[1] if len(args) > 1 else ''} failed "
                           f"(exit {result.returncode})")
    return result.stdout or ""


def _all_watching(status_json: str) -> bool:
    kinds = json.loads(status_json).get("kinds", [])
    return bool(kinds) and all(kind["state"] == "WATCHING" for kind in kinds)


def _start_tracer(*, kubeconfig: str, workdir: Path) -> tuple[subprocess.Popen[bytes], str]:
    config = workdir / "tracer.yaml"
    config.write_text(TRACER_CONFIG)
    address = f"127.0.0.1:{ports.allocate(1)[0]}"
    argv = [str(BIN / "sk-tracer"), "--store", str(workdir / "store"), "--kubeconfig",
            kubeconfig, "--config", str(config), "--listen", address, "--log-json"]
    console.print(f"[bold cyan]$ sk-tracer {shlex.join(argv[1:])} &[/]")
    log = (workdir / "sk-tracer.log").open("wb")
    process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        status = subprocess.run([str(BIN / "skctl"), "tracer", "status", "--tracer", address,
                                 "--json"], capture_output=True, text=True, check=False)
        if status.returncode == 0 and _all_watching(status.stdout):
            return process, address
        if process.poll() is not None:
            break
        time.sleep(0.3)
    process.terminate()
    raise SimkubeError(f"sk-tracer did not start recording; see {workdir / 'sk-tracer.log'}")


async def _record(*, kubeconfig: str, stretch: float) -> None:
    kube = await KubeClient.connect(kubeconfig=Path(kubeconfig))
    try:
        def show(step: demo_workload.Step, web: int) -> None:
            scaled = "".join(f", {name}={count}" for name, count in step.replicas.items())
            load = demo_shop.web_load(step.traffic) / 1000
            console.print(f"  t+{step.at_seconds * stretch:4.0f}s  {step.note:28} traffic "
                          f"{load:4.1f} CPU, web has {web:2} pods{scaled}")
        await demo_workload.run_workload(kube=kube, stretch=stretch, on_step=show)
        await demo_workload.close_shop(kube=kube)
        # sk-tracer sees a deletion within milliseconds; a second of margin on a busy
        # machine, so the export that follows has the shop's closing in it.
        await asyncio.sleep(1.0)
    finally:
        await kube.close()


def _day_pace(env: str, *, stretch: float) -> None:
    """Production's controllers on the day's clock: timers ÷ the recording's compression."""
    pace = parse_speed(demo_workload.DAY_STRETCH / stretch, field="the recording's pace")
    retiming.retime(env, scale=pace,
                    settings=timer_settings(timer_sections(demo_workload.HPA_TIMERS)))
    console.print(f"[yellow]note:[/] the recording plays the shop's day {pace.speed:g} times "
                  f"as fast, so production's HPA and metrics-server do too (sync and scrapes "
                  f"every {pace.to_wall(15):.2g}s for 15s); the HPA's downscale stabilization "
                  "is a minute of the day")


def record_production(*, env: str, workdir: Path, stretch: float) -> Path:
    """Run the shop in its own cluster while sk-tracer records it; return the trace."""
    skctl("env", "up", "--name", env, "--nodes", "1", "--metrics-server")
    _day_pace(env, stretch=stretch)
    status = json.loads(skctl("env", "status", "--name", env, "--json", capture=True))
    kubeconfig = status["kubeconfig"]
    tracer, address = _start_tracer(kubeconfig=kubeconfig, workdir=workdir)
    try:
        asyncio.run(_record(kubeconfig=kubeconfig, stretch=stretch))
        trace = workdir / "shop.trace"
        skctl("export", "--tracer", address, "--namespace", "shop", "-o", str(trace))
    finally:
        tracer.terminate()
        tracer.wait(timeout=30)
    skctl("env", "down", "--name", env)
    return trace
