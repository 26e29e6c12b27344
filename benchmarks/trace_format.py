"""Trace format benchmarks: bytes, write and read speed, native against SimKube v2.

The same content is written in both formats in the same process, so the native figures are
also reported as ratios against SimKube's (the baseline). Two workloads: the real
``dsb-scaling`` sample, and a synthetic trace of realistic Deployment and Pod objects
(1,000,000 events unless ``SIMKUBE_BENCH_EVENTS`` says otherwise), generated on the fly so
the generator itself holds no memory. Memory is the resident set of a fresh process, sampled
while it streams the native trace with every object decoded (what a replay does). "scan" is
a read that frames and checks every event but leaves object bodies encoded until used.

The usage section (recorded PodMetrics per workload, format version 2) is measured against
its own baseline in the same run: the same synthetic events written and read with and without
a usage section of ``USAGE_WORKLOADS`` workloads of ``SIMKUBE_BENCH_USAGE_SAMPLES`` samples
(default 1,440: six hours at the tracer's 15 s), alternating A and B so load from elsewhere
hits both alike.
"""

from __future__ import annotations

import gc
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

from simkube.trace import (
    KubeObject,
    NativeReader,
    RecordedUsage,
    TraceEvent,
    TraceFormat,
    TraceHeader,
    TraceWriter,
    TrackedKind,
    UsageSample,
    WorkloadUsage,
    checked_usage,
    open_trace,
    read_trace,
)

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "tests" / "data" / "simkube"
SYNTHETIC_EVENTS = int(os.environ.get("SIMKUBE_BENCH_EVENTS", "1000000"))
MIN_TIMED_SECONDS = 1.0
LARGE = 100_000  # traces this long also get the memory and read-speed goals
GOAL_BYTES_RATIO = 0.4
GOAL_READ_EVENTS_PER_S = 200_000
GOAL_MEMORY_MB = 50.0
USAGE_EVENTS = int(os.environ.get("SIMKUBE_BENCH_USAGE_EVENTS", "100000"))
USAGE_WORKLOADS = 500  # the synthetic events' 500 Deployments
USAGE_SAMPLES = int(os.environ.get("SIMKUBE_BENCH_USAGE_SAMPLES", "1440"))
HEADER = TraceHeader(source_cluster="bench", created_ms=1_700_000_000_000, tracked_kinds=(
    TrackedKind(kind_key="apps/v1.Deployment", pod_template_paths=("/spec/template",)),
    TrackedKind(kind_key="v1.Pod", pod_template_paths=("",), track_lifecycle=True)))
Figure = dict[str, Any]


def _container(app: str, rng: random.Random) -> dict[str, Any]:
    return {
        "name": app, "image": f"registry.example.com/shop/{app}:1.{rng.randrange(40)}.3",
        "imagePullPolicy": "IfNotPresent",
        "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
        "env": [{"name": "LOG_LEVEL", "value": "info"},
                {"name": "DB_HOST", "valueFrom": {"configMapKeyRef": {
                    "name": f"{app}-config", "key": "db_host"}}}],
        "resources": {"requests": {"cpu": f"{rng.choice((100, 250, 500))}m",
                                   "memory": f"{rng.choice((256, 512, 1024))}Mi"},
                      "limits": {"cpu": "1", "memory": "2Gi"}},
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 10},
        "volumeMounts": [{"name": "config", "mountPath": f"/etc/{app}"}],
        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
    }


def _pod_spec(app: str, rng: random.Random) -> dict[str, Any]:
    return {
        "containers": [_container(app, rng)],
        "volumes": [{"name": "config", "configMap": {"name": f"{app}-config"}}],
        "serviceAccountName": app, "restartPolicy": "Always", "dnsPolicy": "ClusterFirst",
        "schedulerName": "default-scheduler", "terminationGracePeriodSeconds": 30,
        "nodeSelector": {"pool": rng.choice(("general", "memory", "batch"))},
        "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                         "effect": "NoExecute", "tolerationSeconds": 300}],
    }


def _deployment(app: str, namespace: str, rng: random.Random) -> KubeObject:
    labels = {"app": app, "tier": rng.choice(("frontend", "backend", "data"))}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": app, "namespace": namespace, "labels": labels,
                     "annotations": {"meta.helm.sh/release-name": namespace}},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": app}},
                 "strategy": {"type": "RollingUpdate", "rollingUpdate": {
                     "maxSurge": "25%", "maxUnavailable": "25%"}},
                 "template": {"metadata": {"labels": labels}, "spec": _pod_spec(app, rng)}},
    }


def _pod(app: str, namespace: str, rng: random.Random) -> KubeObject:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": app, "namespace": namespace, "labels": {"app": app},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                          "name": app, "controller": True,
                                          "blockOwnerDeletion": True}]},
        "spec": _pod_spec(app, rng),
    }


def synthetic_events(count: int, *, seed: int = 7) -> Iterator[TraceEvent]:
    """``count`` events: a quarter Deployment changes, the rest Pods created and deleted.

    Each of 500 apps has a Deployment and a pod template built once; events carry copies
    that differ where real ones do (replicas; pod name, template hash, node), so the
    generator costs little next to what is measured and holds no memory.
    """
    rng = random.Random(seed)  # noqa: S311  # reproducible synthetic data, not secrets
    apps = [(f"svc-{index:03d}", f"team-{index % 20:02d}") for index in range(500)]
    deployments = [_deployment(app, namespace, rng) for app, namespace in apps]
    pods = [_pod(app, namespace, rng) for app, namespace in apps]
    live: list[KubeObject] = []
    ts = HEADER.created_ms or 0
    for serial in range(count):
        bits = rng.getrandbits(64)  # one draw per event, sliced: keeps the generator cheap
        ts += 1000 * (bits & 1)
        index = (bits >> 1) % len(apps)
        roll = (bits >> 10) % 100
        if roll < 25:
            base = deployments[index]
            replicas = 1 + (bits >> 17) % 49
            yield TraceEvent(ts_ms=ts, applied=[{**base, "spec": {**base["spec"],
                                                                  "replicas": replicas}}])
        elif roll < 85 or not live:
            live.append(_pod_copy(pods[index], serial, bits))
            yield TraceEvent(ts_ms=ts, applied=[live[-1]])
        else:
            yield TraceEvent(ts_ms=ts, deleted=[live.pop((bits >> 24) % len(live))])
        if len(live) > 5000:  # keep the generator's own memory bounded
            del live[:1000]


def _pod_copy(base: KubeObject, serial: int, bits: int) -> KubeObject:
    meta = base["metadata"]
    app = meta["name"]
    template_hash = f"{bits >> 24:010x}"
    owner = {**meta["ownerReferences"][0], "name": f"{app}-{template_hash}"}
    return {**base,
            "metadata": {**meta, "name": f"{app}-{template_hash}-{serial:05x}",
                         "labels": {"app": app, "pod-template-hash": template_hash},
                         "ownerReferences": [owner]},
            "spec": {**base["spec"], "nodeName": f"node-{(bits >> 17) % 2000}"}}


def _timed(action: Callable[[], int]) -> tuple[float, int]:
    """Seconds per run of ``action`` (repeated until MIN_TIMED_SECONDS have passed) and its
    result; small traces are timed over many runs so the figure is not noise."""
    runs = 0
    started = time.perf_counter()
    while True:
        count = action()
        runs += 1
        elapsed = time.perf_counter() - started
        if elapsed >= MIN_TIMED_SECONDS:
            return elapsed / runs, count


def _write(path: Path, events: Callable[[], Iterator[TraceEvent]]) -> int:
    count = 0
    with TraceWriter(path, header=HEADER) as writer:
        for event in events():
            writer.write_event(event)
            count += 1
    return count


def _read(path: Path, *, decode: bool) -> int:
    count = 0
    for event in open_trace(path).events():
        if decode:
            _ = event.applied, event.deleted
        count += 1
    return count


def _rss_mb() -> float:
    with Path("/proc/self/status").open() as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def streaming_read(path: Path) -> tuple[float, float]:
    """Seconds for a pass that decodes every object (what a replay does), and the growth of
    the resident set (MB) over it, sampled every 10,000 events from just after opening."""
    source = open_trace(path)
    gc.collect()
    baseline = peak = _rss_mb()
    started = time.perf_counter()
    for index, event in enumerate(source.events()):
        _ = event.applied, event.deleted
        if index % 10_000 == 0:
            peak = max(peak, _rss_mb())
    seconds = time.perf_counter() - started
    return seconds, max(peak, _rss_mb()) - baseline


def _read_in_fresh_process(path: Path) -> tuple[float, float]:
    # A fresh process, so the heap grown by the other measurements cannot hide growth.
    code = ("import sys; from pathlib import Path; from benchmarks.trace_format import "
            "streaming_read; print(*streaming_read(Path(sys.argv[1])))")
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                          text=True, check=True, cwd=ROOT)
    seconds, growth = done.stdout.split()
    return float(seconds), float(growth)


def _compare(name: str, events: Callable[[], Iterator[TraceEvent]],
             workdir: Path) -> Iterator[Figure]:
    results: dict[TraceFormat, dict[str, float]] = {}
    for trace_format, suffix in ((TraceFormat.SIMKUBE_V2, ".sktrace"),
                                 (TraceFormat.NATIVE, ".trace")):
        path = workdir / f"{name}{suffix}"
        write_s, count = _timed(partial(_write, path, events))
        figures = {"bytes": path.stat().st_size, "events": count,
                   "write_events_per_s": count / write_s}
        if trace_format is TraceFormat.NATIVE and count >= LARGE:
            read_s, figures["memory_growth_mb"] = _read_in_fresh_process(path)
        else:
            read_s, _ = _timed(partial(_read, path, decode=True))
        figures["read_events_per_s"] = count / read_s
        if trace_format is TraceFormat.NATIVE:
            scan_s, _ = _timed(partial(_read, path, decode=False))
            figures["scan_events_per_s"] = count / scan_s
        results[trace_format] = figures
        for key, value in figures.items():
            yield {"benchmark": f"trace_format.{name}.{trace_format.family}.{key}",
                   "value": round(value, 3)}
        path.unlink()
    yield from _goals(name, results[TraceFormat.NATIVE], results[TraceFormat.SIMKUBE_V2])


def _goals(name: str, native: dict[str, float], simkube: dict[str, float]) -> Iterator[Figure]:
    prefix = f"trace_format.{name}"
    ratio = native["bytes"] / simkube["bytes"]
    yield {"benchmark": f"{prefix}.bytes_ratio_native_to_simkube", "value": round(ratio, 4),
           "goal_max": GOAL_BYTES_RATIO, "met": ratio <= GOAL_BYTES_RATIO}
    for key in ("write_events_per_s", "read_events_per_s"):
        yield {"benchmark": f"{prefix}.{key}_ratio_native_to_simkube",
               "value": round(native[key] / simkube[key], 3)}
    if native["events"] >= LARGE:
        yield {"benchmark": f"{prefix}.native.scan_goal", "value": round(
            native["scan_events_per_s"]), "goal_min": GOAL_READ_EVENTS_PER_S,
            "met": native["scan_events_per_s"] >= GOAL_READ_EVENTS_PER_S}
        yield {"benchmark": f"{prefix}.native.memory_goal", "value": round(
            native["memory_growth_mb"], 1), "goal_max": GOAL_MEMORY_MB,
            "met": native["memory_growth_mb"] < GOAL_MEMORY_MB}


def synthetic_usage(*, workloads: int = USAGE_WORKLOADS, samples: int = USAGE_SAMPLES,
                    seed: int = 11) -> tuple[WorkloadUsage, ...]:
    """A series per Deployment of ``synthetic_events``: every 15 s, a load that wanders."""
    rng = random.Random(seed)  # noqa: S311  # reproducible synthetic data, not secrets
    series = []
    for index in range(workloads):
        pods, cpu = rng.randint(1, 10), rng.randint(50, 5000)
        rows = []
        for step in range(samples):
            pods = max(1, pods + rng.choice((-1, 0, 0, 0, 1)))
            cpu = max(0, cpu + rng.randint(-200, 200))
            rows.append(UsageSample(t_ms=15_000 * step, pods=pods, cpu_millicores=cpu,
                                    memory_bytes=pods * 300_000_000 + rng.randrange(2**24)))
        series.append(WorkloadUsage(kind="apps/v1.Deployment", namespace=f"team-{index % 20:02d}",
                                    name=f"svc-{index:03d}", period_ms=15_000,
                                    samples=tuple(rows)))
    return tuple(series)


def _write_usage(path: Path, events: Callable[[], Iterator[TraceEvent]],
                 usage: tuple[WorkloadUsage, ...]) -> int:
    count = 0
    with TraceWriter(path, header=HEADER) as writer:
        for event in events():
            writer.write_event(event)
            count += 1
        for series in usage:
            writer.write_usage(series)
    return count


def _read_with_usage(path: Path) -> int:
    """What a replay reads: every object decoded, then the usage validated (one pass: the
    usage records met on the way are kept)."""
    source = open_trace(path)
    count = 0
    for event in source.events():
        _ = event.applied, event.deleted
        count += 1
    source.usage()
    return count


def _check_usage(records: list[RecordedUsage]) -> int:
    return len(checked_usage(records, source="bench"))


def compare_usage(workdir: Path, *, events: int = USAGE_EVENTS,
                  samples: int = USAGE_SAMPLES) -> Iterator[Figure]:
    """The same events with and without a usage section, A and B alternating."""
    usage = synthetic_usage(samples=samples)
    total = sum(len(series.samples) for series in usage)
    make = partial(synthetic_events, events)
    paths = {"without": workdir / "usage-without.trace", "with": workdir / "usage-with.trace"}
    seconds: dict[str, dict[str, list[float]]] = {v: {"write": [], "read": []} for v in paths}
    for _ in range(2):
        for variant, path in paths.items():
            chosen = usage if variant == "with" else ()
            seconds[variant]["write"].append(_timed(partial(_write_usage, path, make,
                                                            chosen))[0])
            seconds[variant]["read"].append(_timed(partial(_read_with_usage, path))[0])
    sizes = {variant: path.stat().st_size for variant, path in paths.items()}
    with paths["with"].open("rb") as stream:
        records = [item for item in NativeReader(stream) if isinstance(item, RecordedUsage)]
    check_s, _ = _timed(partial(_check_usage, records))
    prefix = f"trace_format.usage-{events}x{USAGE_WORKLOADS}x{samples}"
    best = {variant: {what: min(times) for what, times in kinds.items()}
            for variant, kinds in seconds.items()}
    figures = {
        "samples": total,
        "bytes_without": sizes["without"], "bytes_with": sizes["with"],
        "bytes_per_sample": (sizes["with"] - sizes["without"]) / total,
        "write_s_without": best["without"]["write"], "write_s_with": best["with"]["write"],
        "read_s_without": best["without"]["read"], "read_s_with": best["with"]["read"],
        "write_ratio_with_to_without": best["with"]["write"] / best["without"]["write"],
        "read_ratio_with_to_without": best["with"]["read"] / best["without"]["read"],
        "check_samples_per_s": total / check_s,
    }
    for key, value in figures.items():
        yield {"benchmark": f"{prefix}.{key}", "value": round(value, 4)}
    for path in paths.values():
        path.unlink()


def run(*, synthetic: int = SYNTHETIC_EVENTS, usage_events: int = USAGE_EVENTS,
        usage_samples: int = USAGE_SAMPLES) -> Iterator[Figure]:
    sample = read_trace(SAMPLES / "dsb-scaling.sktrace")
    with tempfile.TemporaryDirectory(prefix="simkube-bench-") as tmp:
        workdir = Path(tmp)
        yield from _compare("dsb-scaling", lambda: iter(sample.events), workdir)
        yield from _compare(f"synthetic-{synthetic}", partial(synthetic_events, synthetic),
                            workdir)
        yield from compare_usage(workdir, events=usage_events, samples=usage_samples)
