"""sk-cloudprov benchmarks: the lookups Cluster Autoscaler makes every loop, and scale-up speed.

A fresh local environment runs the real ``sk-cloudprov`` command (its own process and event
loop, as in production); this process is the client, calling over loopback gRPC with the
synchronous stub, one call at a time, as CA's loop does. Latencies are what the client
observes, so they include the gRPC round trip, not only the lookup. Figures:

* ``cloudprov.increase_to_ready_seconds``: IncreaseSize(+100) until NodeGroupNodes reports
  100 instances running (i.e. 100 Nodes Ready). Goal: at most 10 s.
* ``cloudprov.delete_batch_seconds``: DeleteNodes as Cluster Autoscaler sends a batch of
  empty nodes, one call per node, all at once (10 of the 100), until every call has
  returned; with each call's latency, whether exactly the named instances went, and one
  lone DeleteNodes first as the baseline. Each call waits until the ReplicaSet's status
  counts its marks before replicas drop (docs/cloudprov.md, *Scale-down*). Goal: the batch
  within 2 s, exact.
* ``cloudprov.node_group_for_node_ms`` and ``cloudprov.node_group_nodes_ms`` at 1,000 and
  5,000 nodes: p50/p99. NodeGroupForNode asks about every node in turn plus 10% nodes the
  provider does not know, as CA does. Goal: NodeGroupForNode p99 at most 1 ms at 5,000.
  ``server_within_1ms`` is the share of those calls sk-cloudprov itself handled within 1 ms
  (from its own latency histogram), which separates its work from the round trip and from
  the CPU the client and the control plane take on the same machine. The baseline is a gRPC
  health check to the same server, interleaved call by call: the cheapest round trip the
  machine allows at that moment; ``p99_vs_baseline`` is the ratio.

Lookups start a few seconds after a scale-up has settled (KWOK's heartbeats keep flowing, as
they would under CA). Waits poll NodeGroupNodes every 50 ms for the 100-node figure and
every 0.5 s for the large ones, so the poll itself does not load the server much.
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import yaml
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client.parser import text_string_to_metric_families

from simkube.env import lifecycle
from simkube.env.paths import env_dir
from simkube.gen.clusterautoscaler.cloudprovider.v1.externalgrpc import externalgrpc_pb2 as pb
from simkube.gen.clusterautoscaler.cloudprovider.v1.externalgrpc import (
    externalgrpc_pb2_grpc as pb_grpc,
)

GROUP = "bench"
SIZES = (1_000, 5_000)
LOOKUPS = 20_000
LISTINGS = 200
SETTLE = 5.0
BATCH = 10  # empty nodes Cluster Autoscaler deletes in one go
READY_TIMEOUT = 900.0
RUNNING = pb.InstanceStatus.instanceRunning


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"p50_ms": round(statistics.median(ordered) * 1000, 3),
            "p99_ms": round(ordered[int(len(ordered) * 0.99) - 1] * 1000, 3),
            "max_ms": round(ordered[-1] * 1000, 3), "calls": len(ordered)}


def _timed(call: Callable[[], Any], count: int) -> list[float]:
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return samples


def _wait_running(stub: Any, count: int, *, interval: float) -> float:
    started = time.monotonic()
    while time.monotonic() - started < READY_TIMEOUT:
        reply = stub.NodeGroupNodes(pb.NodeGroupNodesRequest(id=GROUP))
        if sum(1 for i in reply.instances if i.status.instanceState == RUNNING) >= count:
            return time.monotonic() - started
        time.sleep(interval)
    raise TimeoutError(f"{count} instances were not running within {READY_TIMEOUT:.0f}s")


def _handled(metrics: str, method: str) -> tuple[float, float]:
    """(calls handled within 1 ms, all calls) of ``method`` from sk-cloudprov's /metrics."""
    text = httpx.get(f"http://{metrics}/metrics", timeout=30).text
    within = total = 0.0
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.labels.get("method") != method:
                continue
            if sample.name.endswith("_bucket") and sample.labels.get("le") == "0.001":
                within = sample.value
            elif sample.name == "grpc_server_handling_seconds_count":
                total = sample.value
    return within, total


def _lookups(stub: Any, health: Any) -> tuple[list[float], list[float]]:
    """NodeGroupForNode latencies, and those of a health check interleaved with them."""
    reply = stub.NodeGroupNodes(pb.NodeGroupNodesRequest(id=GROUP))
    known = [pb.ExternalGrpcNode(providerID=i.id, name=i.id.removeprefix("simkube://"),
                                 labels={"kubernetes.io/os": "linux"}) for i in reply.instances]
    unknown = [pb.ExternalGrpcNode(providerID=f"kwok://other-{n}", name=f"other-{n}")
               for n in range(len(known) // 10)]
    nodes = known + unknown
    random.shuffle(nodes)
    requests = [pb.NodeGroupForNodeRequest(node=n) for n in nodes]
    check = health_pb2.HealthCheckRequest()
    samples, baseline = [], []
    for index in range(LOOKUPS):
        request = requests[index % len(requests)]
        started = time.perf_counter()
        stub.NodeGroupForNode(request)
        middle = time.perf_counter()
        health.Check(check)
        samples.append(middle - started)
        baseline.append(time.perf_counter() - middle)
    return samples, baseline


def _running_ids(stub: Any) -> set[str]:
    reply = stub.NodeGroupNodes(pb.NodeGroupNodesRequest(id=GROUP))
    return {i.id for i in reply.instances if i.status.instanceState == RUNNING}


def _delete_request(instance: str) -> Any:
    return pb.NodeGroupDeleteNodesRequest(id=GROUP, nodes=[pb.ExternalGrpcNode(
        providerID=instance, name=instance.removeprefix("simkube://"))])


def _delete_batch(stub: Any) -> dict[str, Any]:
    """One lone DeleteNodes, then a batch of BATCH at once; the figure."""
    before = sorted(_running_ids(stub))
    lone, batch = before[0], before[1:BATCH + 1]
    started = time.perf_counter()
    stub.NodeGroupDeleteNodes(_delete_request(lone), timeout=60)
    lone_s = time.perf_counter() - started
    started = time.perf_counter()
    calls = [(time.perf_counter(), stub.NodeGroupDeleteNodes.future(_delete_request(i),
                                                                     timeout=60))
             for i in batch]
    latencies = []
    for sent, call in calls:
        call.result()
        latencies.append(time.perf_counter() - sent)
    batch_s = time.perf_counter() - started
    _wait_running(stub, len(before) - BATCH - 1, interval=0.1)
    time.sleep(SETTLE)
    left = _running_ids(stub)
    wanted = set(before) - {lone, *batch}
    return {"benchmark": "cloudprov.delete_batch_seconds", "nodes": len(before),
            "batch": BATCH, "value": round(batch_s, 3), "goal_max": 2.0,
            "call_ms": _percentiles(latencies),
            "baseline_lone_call_ms": round(lone_s * 1000, 1),
            "exact": left == wanted, "unchosen_gone": len(wanted - left)}


def _run(kubeconfig: Path, work: Path) -> Iterator[dict[str, Any]]:
    config = work / "config.yaml"
    config.write_text(yaml.safe_dump({"nodeGroups": [{
        "id": GROUP, "maxSize": max(SIZES), "pricePerHour": 0.1,
        "shape": {"cpu": 8, "memory": "32Gi", "instanceType": "sim.2xlarge",
                  "zone": "sim-a"}}]}))
    port = 40000 + os.getpid() % 20000
    metrics = f"127.0.0.1:{port + 1}"
    log = (work / "sk-cloudprov.log").open("w")
    server = subprocess.Popen([str(Path(sys.executable).parent / "sk-cloudprov"), "--config",
                               str(config), "--kubeconfig", str(kubeconfig), "--listen",
                               f"127.0.0.1:{port}", "--metrics-listen", metrics,
                               "--log-level", "warning"],
                              stdout=log, stderr=subprocess.STDOUT)
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            grpc.channel_ready_future(channel).result(timeout=120)
            stub = pb_grpc.CloudProviderStub(channel)
            health = health_pb2_grpc.HealthStub(channel)
            _timed(lambda: stub.NodeGroupTargetSize(pb.NodeGroupTargetSizeRequest(id=GROUP)),
                   500)  # warm up
            started = time.monotonic()
            stub.NodeGroupIncreaseSize(pb.NodeGroupIncreaseSizeRequest(id=GROUP, delta=100))
            _wait_running(stub, 100, interval=0.05)
            yield {"benchmark": "cloudprov.increase_to_ready_seconds", "nodes": 100,
                   "value": round(time.monotonic() - started, 2), "goal_max": 10.0}
            time.sleep(SETTLE)
            yield _delete_batch(stub)
            current = 100 - BATCH - 1
            for size in SIZES:
                stub.NodeGroupIncreaseSize(pb.NodeGroupIncreaseSizeRequest(
                    id=GROUP, delta=size - current), timeout=60)
                current = size
                ready = _wait_running(stub, size, interval=0.5)
                time.sleep(SETTLE)
                within_before, total_before = _handled(metrics, "NodeGroupForNode")
                samples, baseline = _lookups(stub, health)
                within, total = _handled(metrics, "NodeGroupForNode")
                figures = _percentiles(samples)
                base = _percentiles(baseline)
                yield {"benchmark": "cloudprov.node_group_for_node_ms", "nodes": size,
                       **figures,
                       **({"goal_p99_max_ms": 1.0} if size == max(SIZES) else {}),
                       "baseline_health_check": {k: base[k] for k in ("p50_ms", "p99_ms")},
                       "p99_vs_baseline": round(figures["p99_ms"] / base["p99_ms"], 2),
                       "server_within_1ms": round((within - within_before)
                                                  / (total - total_before), 4),
                       "scale_up_seconds": round(ready, 1)}
                listing = _timed(lambda: stub.NodeGroupNodes(
                    pb.NodeGroupNodesRequest(id=GROUP)), LISTINGS)
                yield {"benchmark": "cloudprov.node_group_nodes_ms", "nodes": size,
                       **_percentiles(listing)}
    finally:
        server.terminate()
        server.wait(timeout=60)
        log.close()


def run() -> Iterator[dict[str, Any]]:
    name = f"bench-cloudprov-{os.getpid()}"
    lifecycle.up(lifecycle.UpOptions(name=name))
    try:
        with tempfile.TemporaryDirectory() as work:
            yield from _run(env_dir(name) / "kubeconfig", Path(work))
    finally:
        lifecycle.down(name)
