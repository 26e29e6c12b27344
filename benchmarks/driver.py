"""Benchmarks of sk-driver: how punctual a replay is, and how fast it can apply.

- Timing: 50 events a second for 60 seconds at speed 1, one ConfigMap each, after a warm-up
  replay (a fresh API server is slow while it compiles the new CRD's OpenAPI). The driver's
  own lag (due time → request sent) gives p50/p99; a watch on the same objects gives the
  lag until the change is visible to other clients. Next to it, the same process measures
  how late a bare ``asyncio.sleep`` loop wakes up: the machine's own scheduling noise, which
  no replay can beat. Goal: p99 ≤ 20 ms.
- Throughput: the same number of ConfigMaps, all due at once; objects per second through the
  whole driver (trace decoding, rewriting, server-side apply, bookkeeping) next to a plain
  async client creating the same objects with the same concurrency on the same connection
  setup, in the same run, in rounds of baseline-driver then driver-baseline so neither gets
  the warmer API server, each round waiting until the previous one's objects are deleted;
  medians are compared. Goal: ≥ 80% of the baseline.
Each figure is one JSON line. The environment is started here and always torn down.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from simkube.core.kubeapi import KubeClient
from simkube.driver.names import SIMULATION_LABEL
from simkube.driver.options import DEFAULT_CONCURRENCY, build_options
from simkube.driver.registry import launch
from simkube.driver.simulation import Simulation
from simkube.env import lifecycle
from simkube.env.controlplane.components import Layout
from simkube.env.paths import env_dir
from simkube.trace import InMemorySource, Trace, TraceEvent, TraceFormat

EVENTS_PER_SECOND = 50
TIMING_SECONDS = 60
WARM_UP_SECONDS = 10
THROUGHPUT_OBJECTS = 2000
THROUGHPUT_ROUNDS = 4
START_MS = 1_700_000_000_000
P99_GOAL_MS = 20.0
RATE_GOAL = 0.8


def _config_map(name: str, namespace: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace, "labels": {"app": "bench"}},
            "data": {"key": "value " * 20}}


def _source(count: int, *, spacing_ms: float, namespace: str) -> InMemorySource:
    events = [TraceEvent(ts_ms=START_MS + round(index * spacing_ms),
                         applied=[_config_map(f"cm-{index}", namespace)])
              for index in range(count)]
    return InMemorySource(Trace(events=events), name="synthetic", trace_format=TraceFormat.NATIVE,
                          size_bytes=0)


async def _replay(kube: KubeClient, source: InMemorySource, *, name: str,
                  speed: float) -> Simulation:
    options = build_options(name=name, prefix=name, speed=speed)
    simulation = await launch(kube=kube, options=options, source=source)
    await simulation.wait()
    return simulation


async def _watch_arrivals(kube: KubeClient, simulation_name: str, arrivals: dict[str, float],
                          ready: asyncio.Event) -> None:
    query = {"labelSelector": f"{SIMULATION_LABEL}={simulation_name}"}
    listing = await kube.request("GET", "/api/v1/configmaps", query=query)
    query["resourceVersion"] = listing["metadata"]["resourceVersion"]
    ready.set()
    async for event in kube.watch("/api/v1/configmaps", query=query):
        if event["type"] == "ADDED":
            arrivals.setdefault(event["object"]["metadata"]["name"], time.monotonic())


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(fraction * len(ordered)) - 1))]


async def _idle_oversleep_ms(seconds: float) -> list[float]:
    """How late a bare event loop wakes from 20 ms sleeps: the machine's scheduling noise."""
    late = []
    for _ in range(round(seconds / 0.02)):
        due = time.monotonic() + 0.02
        await asyncio.sleep(0.02)
        late.append((time.monotonic() - due) * 1000)
    return late


async def _timing(kubeconfig: Path) -> dict[str, Any]:
    count = EVENTS_PER_SECOND * TIMING_SECONDS
    name = f"timing-{os.getpid()}"
    kube = await KubeClient.connect(kubeconfig=kubeconfig)
    warm_up = await _replay(kube, _source(EVENTS_PER_SECOND * WARM_UP_SECONDS,
                                          spacing_ms=1000 / EVENTS_PER_SECOND,
                                          namespace="warm"), name=f"warm-{name}", speed=1.0)
    await warm_up.cancel()
    idle = await _idle_oversleep_ms(WARM_UP_SECONDS)
    arrivals: dict[str, float] = {}
    ready = asyncio.Event()
    watcher = asyncio.create_task(_watch_arrivals(kube, name, arrivals, ready))
    try:
        await ready.wait()
        simulation = await _replay(kube, _source(count, spacing_ms=1000 / EVENTS_PER_SECOND,
                                                 namespace="bench"), name=name, speed=1.0)
        await asyncio.sleep(1)
        snapshot = simulation.snapshot()
        visible = [(arrivals[f"cm-{i}"] - simulation.clock.due(i * 1000 / EVENTS_PER_SECOND))
                   * 1000 for i in range(count) if f"cm-{i}" in arrivals]
        await simulation.cancel()
    finally:
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
        await kube.close()
    return {"events": count, "events_per_second": EVENTS_PER_SECOND,
            "state": snapshot.state.value, "failed": snapshot.objects_failed,
            "lag_p50_ms": round(snapshot.lag_p50_ms, 2),
            "lag_p99_ms": round(snapshot.lag_p99_ms, 2),
            "lag_max_ms": round(snapshot.lag_max_ms, 2),
            "visible_p50_ms": round(_percentile(visible, 0.5), 2),
            "visible_p99_ms": round(_percentile(visible, 0.99), 2),
            "visible_count": len(visible),
            "idle_loop_oversleep_p50_ms": round(_percentile(idle, 0.5), 2),
            "idle_loop_oversleep_p99_ms": round(_percentile(idle, 0.99), 2)}


async def _driver_rate(kube: KubeClient, round_index: int) -> float:
    name = f"rate-{os.getpid()}-{round_index}"
    source = _source(THROUGHPUT_OBJECTS, spacing_ms=0.001, namespace="bench")
    simulation = await _replay(kube, source, name=name, speed=1_000_000.0)
    snapshot = simulation.snapshot()
    if snapshot.objects_applied != THROUGHPUT_OBJECTS:
        raise RuntimeError(f"the driver applied {snapshot.objects_applied} of "
                           f"{THROUGHPUT_OBJECTS}: {snapshot.failures[-1:]}")
    await simulation.cancel()
    return THROUGHPUT_OBJECTS / (snapshot.wall_time_ms / 1000)


async def _baseline_rate(kubeconfig: Path, round_index: int) -> float:
    """A plain async client: POST the same ConfigMaps, ``DEFAULT_CONCURRENCY`` at a time."""
    from kubernetes_asyncio import config  # noqa: PLC0415  # the baseline's own client

    api = await config.new_client_from_config(config_file=str(kubeconfig))
    api.configuration.connection_pool_maxsize = DEFAULT_CONCURRENCY
    namespace = f"baseline-{os.getpid()}-{round_index}"
    session = api.rest_client.pool_manager
    host = api.configuration.host
    headers = {"Content-Type": "application/json"}
    try:
        async with session.post(f"{host}/api/v1/namespaces", headers=headers, data=json.dumps(
                {"apiVersion": "v1", "kind": "Namespace",
                 "metadata": {"name": namespace}})) as reply:
            reply.raise_for_status()
        bodies = [json.dumps(_config_map(f"cm-{i}", namespace)).encode()
                  for i in range(THROUGHPUT_OBJECTS)]
        slots = asyncio.Semaphore(DEFAULT_CONCURRENCY)

        async def create(body: bytes) -> None:
            async with slots, session.post(f"{host}/api/v1/namespaces/{namespace}/configmaps",
                                           headers=headers, data=body) as reply:
                reply.raise_for_status()
        started = time.monotonic()
        await asyncio.gather(*(create(body) for body in bodies))
        elapsed = time.monotonic() - started
        async with session.delete(f"{host}/api/v1/namespaces/{namespace}") as reply:
            reply.raise_for_status()
        # Like the driver's cancel, wait until everything is gone, so that no round runs
        # while the previous one's objects are still being deleted.
        while True:
            async with session.get(f"{host}/api/v1/namespaces/{namespace}") as reply:
                if reply.status == 404:
                    break
            await asyncio.sleep(0.5)
    finally:
        await api.close()
    return THROUGHPUT_OBJECTS / elapsed


async def _throughput(kubeconfig: Path) -> dict[str, Any]:
    kube = await KubeClient.connect(kubeconfig=kubeconfig)
    driver: list[float] = []
    baseline: list[float] = []
    try:
        await _baseline_rate(kubeconfig, -1)  # warm-up: the first run pays for caches
        for round_index in range(THROUGHPUT_ROUNDS):
            if round_index % 2 == 0:
                baseline.append(await _baseline_rate(kubeconfig, round_index))
                driver.append(await _driver_rate(kube, round_index))
            else:
                driver.append(await _driver_rate(kube, round_index))
                baseline.append(await _baseline_rate(kubeconfig, round_index))
    finally:
        await kube.close()
    return {"driver": statistics.median(driver), "baseline": statistics.median(baseline),
            "driver_runs": driver, "baseline_runs": baseline}


def run() -> Iterator[dict[str, Any]]:
    name = f"bench-driver-{os.getpid()}"
    lifecycle.up(lifecycle.UpOptions(name=name))
    try:
        kubeconfig = Layout(root=env_dir(name)).admin_kubeconfig
        timing = asyncio.run(_timing(kubeconfig))
        yield {"benchmark": "driver.timing_error_ms", **timing, "goal_p99_max": P99_GOAL_MS,
               "meets_goal": timing["lag_p99_ms"] <= P99_GOAL_MS}
        rates = asyncio.run(_throughput(kubeconfig))
        ratio = rates["driver"] / rates["baseline"]
        yield {"benchmark": "driver.apply_rate_objects_per_second",
               "objects": THROUGHPUT_OBJECTS, "concurrency": DEFAULT_CONCURRENCY,
               "value": round(rates["driver"], 1),
               "runs": [round(rate, 1) for rate in rates["driver_runs"]],
               "baseline": "plain async client (aiohttp POST, same concurrency)",
               "baseline_value": round(rates["baseline"], 1),
               "baseline_runs": [round(rate, 1) for rate in rates["baseline_runs"]],
               "ratio_to_baseline": round(ratio, 3), "goal_ratio_min": RATE_GOAL,
               "meets_goal": ratio >= RATE_GOAL}
    finally:
        lifecycle.down(name)
