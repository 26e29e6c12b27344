"""sk-tracer benchmarks: ingest rate, memory over a long recording, export time, end to end.

In-process figures feed a synthetic watch stream (realistic Deployments and Pods: spec
changes, status-only updates the tracer must ignore, creations and deletions over a fixed
set of live objects) through the same recorder and store the tracer runs, on one core. The
baseline, in the same process, is the bare native writer writing the same number of events
without sanitising or comparing anything, so the ratio says what recording costs on top of
writing. Memory is the resident set after 10k, 100k and 1M stored events (goal: within
50 MB from the first to the last). End to end runs the real ``sk-tracer`` against a fresh
local environment while a client creates ConfigMaps as fast as it can.
"""

from __future__ import annotations

import asyncio
import gc
import io
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from simkube.core.logs import configure_logging
from simkube.trace import NativeWriter, TraceEvent, TraceHeader, TrackedKind
from simkube.tracer.config import KindConfig, Retention, SecretPolicy
from simkube.tracer.export_filters import ExportFilters
from simkube.tracer.exporting import Export
from simkube.tracer.kinds import parse_kind_key
from simkube.tracer.recorder import Observed, Recorder
from simkube.tracer.status import KindStatus
from simkube.tracer.store import Store

STORED_EVENTS = int(os.environ.get("SIMKUBE_BENCH_TRACER_EVENTS", "1000000"))
LIVE_OBJECTS = 2_000
E2E_OBJECTS = int(os.environ.get("SIMKUBE_BENCH_TRACER_E2E_OBJECTS", "3000"))
GOAL_EVENTS_PER_S = 10_000
GOAL_MEMORY_GROWTH_MB = 50
HEADER = TraceHeader(tracked_kinds=(TrackedKind(kind_key="apps/v1.Deployment"),
                                    TrackedKind(kind_key="v1.Pod")))
KINDS = {key: KindConfig(kind=parse_kind_key(key)) for key in ("apps/v1.Deployment", "v1.Pod")}


def _rss_mb() -> float:
    with open("/proc/self/statm") as statm:  # noqa: PTH123
        pages = int(statm.read().split()[1])
    return pages * resource.getpagesize() / 2**20


def _object(kind: str, index: int, version: int, rng: random.Random) -> dict[str, Any]:
    """A watch event's object as the API server sends it: server fields and status too."""
    name = f"app-{index}"
    metadata = {"name": name, "namespace": f"team-{index % 20}", "uid": f"uid-{index}",
                "resourceVersion": str(version), "generation": version,
                "creationTimestamp": "2026-01-01T00:00:00Z",
                "labels": {"app": name, "tier": rng.choice(["web", "db", "cache"])},
                "annotations": {"deployment.kubernetes.io/revision": str(version)},
                "managedFields": [{"manager": "kube-controller-manager", "operation": "Update",
                                   "fieldsV1": {"f:status": {}}}]}
    containers = [{"name": "app", "image": f"registry.example/{name}:{rng.randint(1, 9)}",
                   "resources": {"requests": {"cpu": f"{rng.randint(1, 8) * 100}m",
                                              "memory": f"{rng.randint(1, 16) * 64}Mi"}},
                   "env": [{"name": f"VAR_{i}", "value": "x" * 16} for i in range(4)]}]
    if kind == "v1.Pod":
        return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
                "spec": {"containers": containers, "nodeName": f"node-{index % 50}"},
                "status": {"phase": "Running", "podIP": f"10.0.{index % 250}.{version % 250}"}}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata,
            "spec": {"replicas": rng.randint(1, 10), "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": containers}}},
            "status": {"replicas": 3, "readyReplicas": version % 4}}


def synthetic_stream(*, seed: int = 11) -> Iterator[tuple[dict[str, Any], bool]]:
    """Endless (object, deleted) observations over ``LIVE_OBJECTS`` objects: 70% spec
    changes, 20% status-only updates, 10% deletions followed by re-creation."""
    rng = random.Random(seed)  # noqa: S311  # reproducible data, not secrets
    version = 0
    live: dict[int, dict[str, Any]] = {}
    while True:
        version += 1
        index = rng.randrange(LIVE_OBJECTS)
        kind = "v1.Pod" if index % 2 else "apps/v1.Deployment"
        roll = rng.random()
        known = live.get(index)
        if known is not None and roll < 0.2:
            status_only = {**known, "status": {"observed": version},
                           "metadata": {**known["metadata"], "resourceVersion": str(version)}}
            live[index] = status_only
            yield status_only, False
        elif known is not None and roll < 0.3:
            del live[index]
            yield known, True
        else:
            live[index] = _object(kind, index, version, rng)
            yield live[index], False


def _observe(recorder: Recorder, statuses: dict[str, KindStatus], obj: dict[str, Any],
             deleted: bool) -> None:
    key = f"{obj['apiVersion']}.{obj['kind']}"
    recorder.handle(Observed(kind=KINDS[key], status=statuses[key], obj=obj, ancestors=(),
                             record=True, deleted=deleted))


def _ingest_and_memory(directory: Path) -> Iterator[dict[str, Any]]:
    store = Store(directory, header=HEADER, retention=Retention(max_age_seconds=0, max_bytes=0))
    recorder = Recorder(store, secrets=SecretPolicy.REDACT, lifecycles=None)
    statuses = {key: KindStatus(kind=key) for key in KINDS}
    stream = synthetic_stream()
    checkpoints = [c for c in (10_000, 100_000, 1_000_000) if c <= STORED_EVENTS]
    memory: dict[int, float] = {}
    observed = 0
    started = time.process_time()
    ingest_rate = 0.0
    for checkpoint in checkpoints:
        while store.status().events < checkpoint:
            for _ in range(1_000):
                obj, deleted = next(stream)
                _observe(recorder, statuses, obj, deleted)
                observed += 1
            store.maintain()
        if not ingest_rate and (checkpoint >= 100_000 or checkpoint == checkpoints[-1]):
            ingest_rate = observed / (time.process_time() - started)  # CPU time: one core
        gc.collect()
        memory[checkpoint] = _rss_mb()
    stored = store.status().events
    yield {"benchmark": "tracer.ingest_events_per_second", "value": round(ingest_rate),
           "observed": observed, "stored": stored, "goal_min": GOAL_EVENTS_PER_S,
           "ratio_vs_bare_writer": round(ingest_rate / _bare_writer_rate(), 3)}
    growth = memory[checkpoints[-1]] - memory[checkpoints[0]]
    yield {"benchmark": "tracer.memory_mb", "by_stored_events": memory,
           "growth_mb": round(growth, 1), "goal_max_growth_mb": GOAL_MEMORY_GROWTH_MB,
           "store_bytes": store.status().bytes, "segments": store.status().segments}
    started_wall = time.perf_counter()
    started_cpu = time.process_time()
    with store.snapshot() as views:
        export = Export(directory=directory, views=views, start_ms=0,
                        end_ms=store.now_ms() + 1, filters=ExportFilters(), header=HEADER,
                        chunk_bytes=2**20)
        size = written = 0
        for chunk in export.chunks():
            size += len(chunk.data)
            written = chunk.events_written
    seconds = time.perf_counter() - started_wall
    cpu = time.process_time() - started_cpu  # wall time suffers when the machine is shared
    yield {"benchmark": "tracer.export_seconds", "events": written, "value": round(seconds, 2),
           "cpu_seconds": round(cpu, 2), "events_per_cpu_second": round(written / cpu),
           "bytes": size}
    store.close()


def _bare_writer_rate() -> float:
    """Baseline: the native writer alone, the same objects, every one written."""
    stream = synthetic_stream()
    objects = [next(stream)[0] for _ in range(50_000)]
    started = time.process_time()
    with NativeWriter(io.BytesIO(), header=HEADER, level=1) as writer:
        for index, obj in enumerate(objects):
            writer.write_event(TraceEvent(ts_ms=index, applied=[obj]))
    return len(objects) / (time.process_time() - started)


def _spawn_tracer(kubeconfig: str, store: Path, config_file: Path,
                  port: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen([str(Path(sys.executable).parent / "sk-tracer"), "--kubeconfig",
                             kubeconfig, "--store", str(store), "--config", str(config_file),
                             "--listen", f"127.0.0.1:{port}", "--log-level", "warning"])


async def _end_to_end(kubeconfig: str, store: Path) -> dict[str, Any]:
    from kubernetes_asyncio import client, config  # noqa: PLC0415

    from simkube.tracer.client import get_status  # noqa: PLC0415

    port = 50_000 + os.getpid() % 10_000
    config_file = store.parent / "tracer.yaml"
    config_file.write_text("trackedObjects:\n  v1.ConfigMap: {}\nnamespaces: [bench]\n")
    tracer = _spawn_tracer(kubeconfig, store, config_file, port)
    try:
        api = await config.new_client_from_config(config_file=kubeconfig)
        async with api:
            core = client.CoreV1Api(api)
            await core.create_namespace(
                client.V1Namespace(metadata=client.V1ObjectMeta(name="bench")))
            for _ in range(200):
                try:
                    status = await get_status(f"127.0.0.1:{port}", timeout=2)
                    if status.kinds and status.kinds[0].state == 2:
                        break
                except Exception:  # noqa: S110  # not up yet
                    pass
                await asyncio.sleep(0.1)
            slots = asyncio.Semaphore(32)

            async def create(index: int) -> None:
                async with slots:
                    await core.create_namespaced_config_map("bench", client.V1ConfigMap(
                        metadata=client.V1ObjectMeta(name=f"cm-{index}"), data={"k": "v"}))

            started = time.perf_counter()
            await asyncio.gather(*(create(i) for i in range(E2E_OBJECTS)))
            created = time.perf_counter() - started
            # kube-root-ca.crt is recorded too: one more object than created.
            while (await get_status(f"127.0.0.1:{port}")).store_events < E2E_OBJECTS + 1:  # noqa: ASYNC110  # the measurement
                await asyncio.sleep(0.05)
            recorded = time.perf_counter() - started
    finally:
        tracer.terminate()
        tracer.wait(timeout=30)
    return {"benchmark": "tracer.end_to_end_objects_per_second",
            "value": round(E2E_OBJECTS / recorded), "objects": E2E_OBJECTS,
            "client_creates_per_second": round(E2E_OBJECTS / created),
            "lag_seconds": round(recorded - created, 2)}


def run() -> Iterator[dict[str, Any]]:
    configure_logging(level="warning")  # stdout carries the JSON lines only
    scratch = Path(tempfile.mkdtemp(prefix="bench-tracer-"))
    try:
        yield from _ingest_and_memory(scratch / "store")
        from simkube.env import lifecycle  # noqa: PLC0415

        name = f"bench-tracer-{os.getpid()}"
        env, _ = lifecycle.up(lifecycle.UpOptions(name=name))
        try:
            yield asyncio.run(_end_to_end(env.kubeconfig, scratch / "e2e-store"))
        finally:
            lifecycle.down(name)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
