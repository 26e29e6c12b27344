"""One scale-up, link by link, in trace time at speed 1 and at speed 20: where speed adds time.

A replay at speed *s* is faithful only if every link between a pod that cannot be placed and
that pod running on a new node takes the same trace time as at speed 1. Timers are divided by
the speed (docs/simulated-time.md); what is left is wall-clock latency — Cluster Autoscaler's
loop, the watches between the components, the scheduler's queue — which is *s* times larger in
trace time. This benchmark measures each link so that docs/fidelity.md can say which.

It replays a small trace (a Deployment whose pods fit two to a ``large`` node, created 5 s in)
with the real CA at each speed, in one environment, and watches from outside with wall-clock
stamps: pod created → ``Unschedulable`` → the node group's Deployment raised (CA's plan
carried out: IncreaseSize) → Node created → Ready → pod bound → Running, and CA's
``TriggeredScaleUp`` Event beside them (CA posts it after IncreaseSize).
Trace stamps come from sk-driver's replay clock, asked as each link is seen (so time the
run's clock was held for the autoscaler, ``held_s`` of wall time, is not counted;
docs/simulated-time.md).
Settings: ``SIMKUBE_CHAIN_SPEEDS`` (default ``1,20``), ``SIMKUBE_CHAIN_HOLD=0`` for runs that
do not hold the clock, ``SIMKUBE_CHAIN_CREATE_AT`` (trace seconds, default 5); the CA binary
as for the fidelity benchmark. Without a CA binary it prints one line saying so.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import grpc

from benchmarks.chain_links import LINKS, ChainWatch
from benchmarks.fidelity_replay import SKCTL, skctl
from benchmarks.fidelity_workload import PLACEMENT
from simkube.core.errors import EnvironmentStateError
from simkube.core.kubeapi import KubeClient
from simkube.env.autoscalers.cluster_autoscaler import resolve
from simkube.env.services.commands import DEFAULT_NODE_GROUPS
from simkube.gen.simkube.driver.v1 import driver_pb2, driver_pb2_grpc
from simkube.trace import Trace, TraceEvent, TraceHeader, write_trace

APP = "chain-burst"
START_MS = 1_700_000_000_000
CREATE_AT_MS = int(float(os.environ.get("SIMKUBE_CHAIN_CREATE_AT", "5")) * 1000)
HOLD = "--no-hold" if os.environ.get("SIMKUBE_CHAIN_HOLD", "1") == "0" else "--hold"
DURATION_S = 150  # provisioning is 60 s ± 15 s of trace, Ready 10 s later


def _trace(path: Path) -> Path:
    """Four 3-CPU pods: the one ``large`` node (8 CPU) takes two, the others need another."""
    labels = {"app": APP}
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": APP, "namespace": "chain", "labels": labels},
        "spec": {"replicas": 4, "selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels},
            "spec": {**PLACEMENT, "containers": [{
                "name": "app", "image": "registry.example/app:1",
                "resources": {"requests": {"cpu": "3", "memory": "256Mi"}}}]}}}}
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "chain"}}
    trace = Trace(header=TraceHeader(), lifecycles=[], events=[
        TraceEvent(ts_ms=START_MS, applied=[namespace], deleted=[]),
        TraceEvent(ts_ms=START_MS + CREATE_AT_MS, applied=[deployment], deleted=[]),
        TraceEvent(ts_ms=START_MS + DURATION_S * 1000, applied=[], deleted=[])])
    write_trace(trace, path)
    return path


def _driver_clock(channel: grpc.aio.Channel) -> Callable[[], Awaitable[float | None]]:
    """The trace time of the replay sk-driver is running now (None when none is)."""
    stub = driver_pb2_grpc.DriverStub(channel)

    async def trace_now() -> float | None:
        reply = await stub.ListSimulations(driver_pb2.ListSimulationsRequest(), timeout=2.0)
        live = [p for p in reply.simulations
                if p.state == driver_pb2.SimulationState.SIMULATION_STATE_RUNNING]
        return live[0].trace_time_ms / 1000 if live else None
    return trace_now


async def _measure(env: str, trace: Path, *, speed: float) -> dict[str, Any]:
    status = json.loads(skctl("env", "status", "--name", env, "--json"))
    kube = await KubeClient.connect(kubeconfig=Path(status["kubeconfig"]))
    channel = grpc.aio.insecure_channel(status["driver"])
    name = f"chain-x{speed:g}".replace(".", "-")
    try:
        watch = ChainWatch(kube=kube, app=APP, trace_now=_driver_clock(channel))
        await watch.start()
        await asyncio.to_thread(
            skctl, "run", "--env", env, "--name", name, "--trace", str(trace), "--speed",
            f"{speed:g}", "--duration", f"{DURATION_S}s", "--seed", "1", "--wait", HOLD,
            "--timeout", "900", timeout=1000, show=True)
        await watch.stop()
    finally:
        await kube.close()
        await channel.close()
    status = json.loads(skctl("status", name, "--env", env, "--json"))["status"]
    runs = status.get("runs") or [{}]
    held = float(runs[-1].get("heldSeconds") or 0.0)
    return watch.links(speed=speed, held_wall_s=held)


def run() -> Iterator[dict[str, Any]]:
    label: dict[str, Any] = {"benchmark": "scaleup_chain"}
    try:
        binary = resolve(None)
    except EnvironmentStateError as exc:
        yield {**label, "figure": "scaleup_chain", "ran": False, "reason": str(exc)}
        return
    label["autoscaler_version"] = binary.version
    speeds = [float(s) for s in os.environ.get("SIMKUBE_CHAIN_SPEEDS", "1,20").split(",")]
    env = f"bench-chain-{os.getpid()}"
    work = Path(tempfile.mkdtemp(prefix="simkube-chain-"))
    measured: dict[float, dict[str, Any]] = {}
    try:
        skctl("env", "up", "--name", env, "--services", "--autoscaler", "--autoscaler-binary",
              str(binary.path), "--node-groups", str(DEFAULT_NODE_GROUPS), show=True)
        trace = _trace(work / "chain.trace")
        for speed in speeds:
            measured[speed] = asyncio.run(_measure(env, trace, speed=speed))
            yield {**label, "figure": "scaleup_chain.speed", "speed": speed, **measured[speed]}
    finally:
        subprocess.run([SKCTL, "env", "down", "--name", env], check=False,
                       capture_output=True, text=True, timeout=300)
    base = measured.get(min(measured)) if measured else None
    for speed, links in measured.items():
        if base is None or links is base:
            continue
        added = {link: _added(links, base, link) for link in LINKS[1:]}
        yield {**label, "figure": "scaleup_chain.added", "speed": speed,
               "against": min(measured), "added_trace_s": added}


def _added(links: dict[str, Any], base: dict[str, Any], link: str) -> float | None:
    """Trace seconds this link took beyond the base speed's (its step from the previous)."""
    steps, base_steps = links.get("steps_trace_s", {}), base.get("steps_trace_s", {})
    if steps.get(link) is None or base_steps.get(link) is None:
        return None
    return round(float(steps[link]) - float(base_steps[link]), 2)
