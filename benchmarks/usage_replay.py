"""Benchmark of recorded-usage replay: what playing usage costs the driver and the API server.

1,000 pods (20 Deployments of 50 replicas) on 12 fake nodes, in an environment started with
``--metrics-server``, replayed for 900 s of trace time at speed 10 (90 s of wall time), with
usage sampled every 15 s (60 samples per workload): long enough that the pods run (about
40 pods a second start here) for most of it. The same trace is replayed without its usage
as the baseline, baseline first (the usage run gets the warmer API server, which favours
it only in the start-up both share); the driver runs in this process, so its CPU is this process's
CPU time over the replay (the same bookkeeping in both). Figures: the driver's CPU seconds
with and without usage (and the difference per wall second), the usage objects written and
the pods marked countable for the HPA (one patch per new pod) per wall second, and what one
ResourceUsage per pod would have written (pods x samples).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from simkube.core.kubeapi import KubeClient
from simkube.driver.options import build_options
from simkube.driver.registry import launch
from simkube.env import lifecycle
from simkube.env.controlplane.components import Layout
from simkube.env.paths import env_dir
from simkube.trace import InMemorySource, Trace, TraceEvent, TraceFormat, UsageSample, WorkloadUsage

WORKLOADS = 20
REPLICAS = 50
NODES = 12
TRACE_S = 900
PERIOD_S = 15
SPEED = 10.0
ROUNDS = 1
START_MS = 1_700_000_000_000


def _deployment(index: int) -> dict[str, Any]:
    labels = {"app": f"w{index}"}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": f"w{index}", "namespace": "bench"},
            "spec": {"replicas": REPLICAS, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": {"containers": [
                         {"name": "app", "image": "app:1",
                          "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}}}}


def _usage(index: int) -> WorkloadUsage:
    samples = tuple(UsageSample(t_ms=t * 1000, pods=REPLICAS,
                                cpu_millicores=REPLICAS * (5 + (t // PERIOD_S) % 10),
                                memory_bytes=REPLICAS * 8 * (1 << 20))
                    for t in range(0, TRACE_S, PERIOD_S))
    return WorkloadUsage(kind="apps/v1.Deployment", namespace="bench", name=f"w{index}",
                         period_ms=PERIOD_S * 1000, samples=samples)


def _source(*, with_usage: bool) -> InMemorySource:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench"}}
    events = [TraceEvent(ts_ms=START_MS,
                         applied=[namespace, *(_deployment(i) for i in range(WORKLOADS))]),
              TraceEvent(ts_ms=START_MS + TRACE_S * 1000, applied=[])]
    usage = tuple(_usage(i) for i in range(WORKLOADS)) if with_usage else ()
    return InMemorySource(Trace(events=events, usage=usage), name="usage-bench",
                          trace_format=TraceFormat.NATIVE, size_bytes=0)


async def _replay(kube: KubeClient, *, with_usage: bool, round_index: int) -> dict[str, float]:
    name = f"usage-{'on' if with_usage else 'off'}-{round_index}"
    options = build_options(name=name, prefix=name, speed=SPEED, cleanup=True)
    cpu, wall = time.process_time(), time.monotonic()
    simulation = await launch(kube=kube, options=options,
                              source=_source(with_usage=with_usage))
    async for snapshot in simulation.changes(interval=0.2):
        if snapshot.state.finished:  # replayed; its cleanup is not the replay's cost
            break
    cpu, wall = time.process_time() - cpu, time.monotonic() - wall
    usage = simulation.usage
    writes = usage.writes if usage is not None else 0
    marks = usage.countable.marked if usage is not None else 0
    await simulation.wait()  # the cleanup (namespace and its pods) before the next round
    return {"cpu_s": cpu, "wall_s": wall, "writes": writes, "countable_marks": marks}


async def _rounds(kubeconfig: Path) -> dict[str, list[dict[str, float]]]:
    kube = await KubeClient.connect(kubeconfig=kubeconfig)
    runs: dict[str, list[dict[str, float]]] = {"on": [], "off": []}
    try:
        for round_index in range(ROUNDS):
            order = (False, True) if round_index % 2 == 0 else (True, False)
            for with_usage in order:
                result = await _replay(kube, with_usage=with_usage, round_index=round_index)
                runs["on" if with_usage else "off"].append(result)
    finally:
        await kube.close()
    return runs


def run() -> Iterator[dict[str, Any]]:
    name = f"bench-usage-{os.getpid()}"
    lifecycle.up(lifecycle.UpOptions(name=name, nodes=NODES, metrics_server=True))
    try:
        runs = asyncio.run(_rounds(Layout(root=env_dir(name)).admin_kubeconfig))
    finally:
        lifecycle.down(name)
    on_cpu = statistics.median(r["cpu_s"] for r in runs["on"])
    off_cpu = statistics.median(r["cpu_s"] for r in runs["off"])
    wall = statistics.median(r["wall_s"] for r in runs["on"])
    writes = statistics.median(r["writes"] for r in runs["on"])
    marks = statistics.median(r["countable_marks"] for r in runs["on"])
    samples = TRACE_S // PERIOD_S
    yield {"benchmark": "usage_replay.driver_cpu_seconds", "pods": WORKLOADS * REPLICAS,
           "workloads": WORKLOADS, "speed": SPEED, "trace_s": TRACE_S,
           "with_usage": round(on_cpu, 2), "baseline": round(off_cpu, 2),
           "overhead_cpu_per_wall_second": round((on_cpu - off_cpu) / wall, 4),
           "runs": runs}
    yield {"benchmark": "usage_replay.api_writes_per_second", "writes": writes,
           "countable_marks": marks, "wall_s": round(wall, 1),
           "per_second": round((writes + marks) / wall, 2),
           "one_resource_usage_per_pod_would_write": WORKLOADS * REPLICAS * samples,
           "per_pod_per_second": round(WORKLOADS * REPLICAS * samples / wall, 1)}
