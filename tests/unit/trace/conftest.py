"""Builders and sample paths shared by the trace tests."""

from __future__ import annotations

import io
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack
import pytest
import zstandard

from simkube.trace import (
    KubeObject,
    NativeWriter,
    PodLifecycle,
    PodRun,
    Trace,
    TraceEvent,
    TraceHeader,
    TrackedKind,
)
from simkube.trace.model.usage import UsageSample, WorkloadUsage
from simkube.trace.native.format import MAGIC, PREAMBLE, RECORD_LENGTH

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "simkube"
SAMPLE_NAMES = ("cronjob.sktrace", "bare-pods.sktrace", "dsb-scaling.sktrace",
                "validation_trace.json")
HEADER = TraceHeader(created_ms=1_700_000_000_000, source_cluster="test", tracked_kinds=(
    TrackedKind(kind_key="apps/v1.Deployment", pod_template_paths=("/spec/template",)),
    TrackedKind(kind_key="v1.Pod", pod_template_paths=("",), track_lifecycle=True,
                skip_owned=True)))


def deployment(name: str = "web", namespace: str = "shop", *, replicas: int = 2,
               labels: dict[str, str] | None = None, **pod_spec: Any) -> KubeObject:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "registry.example/c:1",
                                            "resources": {"requests": {"cpu": "250m",
                                                                       "memory": "512Mi"},
                                                          "limits": {"cpu": "1",
                                                                     "memory": "1Gi"}}}]}
    spec.update(pod_spec)
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace,
                         "labels": labels if labels is not None else {"app": name}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": spec}}}


def pod(name: str = "p", namespace: str = "shop", **spec: Any) -> KubeObject:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": {"app": name}},
            "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec}}


def sample_trace() -> Trace:
    """A small native-style trace exercising every part of the model."""
    return Trace(
        header=HEADER,
        initial_state=[deployment("base", replicas=1)],
        events=[
            TraceEvent(ts_ms=1_700_000_000_000, applied=[deployment("web"), pod("p1")]),
            TraceEvent(ts_ms=1_700_000_001_500, applied=[deployment("web", replicas=5)]),
            TraceEvent(ts_ms=1_700_000_060_000, deleted=[pod("p1")]),
        ],
        lifecycles=[PodLifecycle(owner_kind="v1.Pod", owner="shop/p1", runs=(
            PodRun(start_ms=1_700_000_000_500, end_ms=1_700_000_030_000),
            PodRun(start_ms=1_700_000_040_000)))])


def web_usage(*, period_ms: int = 15_000) -> WorkloadUsage:
    """Usage of the sample trace's Deployment shop/web: load rising, then falling."""
    rows = [(0, 2, 300, 400_000_000), (15_000, 3, 900, 600_000_000),
            (30_000, 5, 2_400, 1_000_000_000), (45_000, 2, 200, 400_000_000)]
    return WorkloadUsage(kind="apps/v1.Deployment", namespace="shop", name="web",
                         period_ms=period_ms, samples=tuple(
                             UsageSample(t_ms=t, pods=pods, cpu_millicores=cpu, memory_bytes=mem)
                             for t, pods, cpu, mem in rows))


def usage_trace() -> Trace:
    """``sample_trace()`` with recorded usage: the golden v2 fixture's content."""
    trace = sample_trace()
    trace.usage = (web_usage(), WorkloadUsage(
        kind="v1.Pod", namespace="shop", name="p1", period_ms=15_000,
        samples=(UsageSample(t_ms=0, pods=1, cpu_millicores=50, memory_bytes=10_000_000),)))
    return trace


def native_bytes(trace: Trace) -> bytes:
    buffer = io.BytesIO()
    with NativeWriter(buffer, header=trace.header) as writer:
        writer.write_state(trace.initial_state)
        for event in trace.events:
            writer.write_event(event)
        for lifecycle in trace.lifecycles:
            writer.write_lifecycle(lifecycle)
        for usage in trace.usage:
            writer.write_usage(usage)
    return buffer.getvalue()


def crafted(records: list[Any], *, version: int = 1) -> bytes:
    """A stream of exactly these records; an end record without its CRC (``[6, a, b, c]`` in
    version 1, ``[6, a, b, c, d]`` in version 2) gets it."""
    body = b""
    for record in records:
        if record[0] == 6 and len(record) == (4 if version == 1 else 5):
            record = [*record, zlib.crc32(body)]  # noqa: PLW2901
        data = msgpack.packb(record, use_bin_type=True)
        body += RECORD_LENGTH.pack(len(data)) + data
    return PREAMBLE.pack(MAGIC, version, 0) + zstandard.ZstdCompressor().compress(body)


@pytest.fixture
def samples() -> Path:
    return SAMPLES


@pytest.fixture
def write_native(tmp_path: Path) -> Callable[[Trace, str], Path]:
    def write(trace: Trace, name: str = "t.trace") -> Path:
        path = tmp_path / name
        path.write_bytes(native_bytes(trace))
        return path
    return write
