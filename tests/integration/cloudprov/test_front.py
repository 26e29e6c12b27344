"""sk-cloudprov-front between a client and the real sk-cloudprov on the session's cluster.

The front's Go tests (cache, canonical keys, forwarding, invalidation) run here with
``go test``; then the built binary is put in front of an sk-cloudprov that manages real
Nodes, and every answer through it is compared with sk-cloudprov's own: a cached one (a
node's group, a group's empty options), a forwarded one (target sizes, before and after a
scale-up through the front), and refusals, which pass through with their code and message
and are never kept.
"""

from __future__ import annotations

import signal
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client.parser import text_string_to_metric_families

from simkube.env.services.cloudprov_front import front_spec
from simkube.env.toolchain.cache import binary_path
from simkube.env.toolchain.catalog import CLOUDPROV_FRONT, Binary
from simkube.gen.clusterautoscaler.cloudprovider.v1.externalgrpc import externalgrpc_pb2 as pb
from simkube.gen.clusterautoscaler.cloudprovider.v1.externalgrpc import (
    externalgrpc_pb2_grpc as pb_grpc,
)
from tests.integration.cloudprov.conftest import WAIT, Harness
from tests.integration.cloudprov.test_command import free_port
from tests.support.gotests import assert_go_tests_pass
from tests.support.kube import eventually

pytestmark = pytest.mark.integration


def test_the_fronts_go_tests_pass() -> None:
    assert_go_tests_pass(CLOUDPROV_FRONT)


@dataclass
class Front:
    process: subprocess.Popen[bytes]
    port: int
    metrics_port: int
    log: Path

    def counts(self) -> dict[tuple[str, str], float]:
        """(sample name, method) -> value of the front's counters."""
        text = httpx.get(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=10).text
        return {(s.name, s.labels.get("method", "")): s.value
                for family in text_string_to_metric_families(text) for s in family.samples
                if s.name.endswith("_total")}

    def forwards(self, method: str) -> float:
        text = httpx.get(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=10).text
        return sum(s.value for family in text_string_to_metric_families(text)
                   for s in family.samples
                   if s.name == "sk_cloudprov_front_forwards_total"
                   and s.labels["method"] == method)


def launch(argv: list[str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)


async def start_front(harness: Harness, tmp_path: Path) -> Front:
    assert harness.provider is not None
    port, metrics = free_port(), free_port()
    spec = front_spec(binary=binary_path(Binary.CLOUDPROV_FRONT), port=port,
                      metrics_port=metrics, upstream=f"127.0.0.1:{harness.provider.port}")
    log = tmp_path / "front.log"
    process = launch(spec.argv, log)
    front = Front(process=process, port=port, metrics_port=metrics, log=log)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        health = health_pb2_grpc.HealthStub(channel)

        async def serving() -> bool:
            assert process.poll() is None, log.read_text()
            try:
                reply = await health.Check(health_pb2.HealthCheckRequest(service=""), timeout=2)
            except grpc.aio.AioRpcError:
                return False
            return reply.status == health_pb2.HealthCheckResponse.SERVING
        await eventually(serving, timeout=WAIT, what="the front serving", interval=0.2)
    return front


@pytest.fixture
async def fronted(harness: Harness, tmp_path: Path) -> AsyncIterator[tuple[Any, Any, Front]]:
    """sk-cloudprov with one group of two nodes; its stub, the front's stub, the front."""
    group = f"fr-{harness.suffix}"
    await harness.start([{"id": group, "minSize": 2, "maxSize": 4, "nodeFile": "m5.yaml"}])
    await harness.running(group, 2)
    front = await start_front(harness, tmp_path)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{front.port}")
    try:
        yield harness.stub, pb_grpc.CloudProviderStub(channel), front
    finally:
        await channel.close()
        if front.process.poll() is None:
            front.process.kill()
        front.process.wait(timeout=30)


def node_request(node: dict[str, Any]) -> pb.NodeGroupForNodeRequest:
    """As CA's client sends it: providerID, name, labels and annotations of the Node."""
    meta = node["metadata"]
    return pb.NodeGroupForNodeRequest(node=pb.ExternalGrpcNode(
        providerID=node["spec"].get("providerID", ""), name=meta["name"],
        labels=meta.get("labels") or {}, annotations=meta.get("annotations") or {}))


async def test_cached_and_forwarded_answers_are_sk_cloudprovs(
        harness: Harness, fronted: tuple[Any, Any, Front]) -> None:
    direct, through, front = fronted
    group = f"fr-{harness.suffix}"
    nodes = await harness.nodes()
    assert len(nodes) == 2
    for node in nodes.values():
        request = node_request(node)
        expected = await direct.NodeGroupForNode(request)
        assert expected.nodeGroup.id == group
        assert [await through.NodeGroupForNode(request) for _ in range(3)] == [expected] * 3
    infra = pb.NodeGroupForNodeRequest(node=pb.ExternalGrpcNode(name=f"infra-{harness.namespace}"))
    assert await through.NodeGroupForNode(infra) == await direct.NodeGroupForNode(infra)
    assert (await through.NodeGroupForNode(infra)).nodeGroup.id == ""
    options = pb.NodeGroupAutoscalingOptionsRequest(
        id=group, defaults=pb.NodeGroupAutoscalingOptions(scaleDownUtilizationThreshold=0.5))
    for _ in range(2):
        assert await through.NodeGroupGetOptions(options) == \
            await direct.NodeGroupGetOptions(options)
    counts = front.counts()
    # One miss per node, then hits; the infra node's empty answer is asked every time.
    assert counts[("sk_cloudprov_front_cache_misses_total", "NodeGroupForNode")] == 2 + 2
    assert counts[("sk_cloudprov_front_cache_hits_total", "NodeGroupForNode")] == 4
    assert front.forwards("NodeGroupForNode") == 2 + 2
    assert counts[("sk_cloudprov_front_cache_hits_total", "NodeGroupGetOptions")] == 1

    size = pb.NodeGroupTargetSizeRequest(id=group)
    assert await through.NodeGroupTargetSize(size) == await direct.NodeGroupTargetSize(size)
    await through.NodeGroupIncreaseSize(pb.NodeGroupIncreaseSizeRequest(id=group, delta=1))
    after = await through.NodeGroupTargetSize(size)
    assert after.targetSize == 3
    assert after == await direct.NodeGroupTargetSize(size)
    assert front.forwards("NodeGroupTargetSize") == 2
    await harness.running(group, 3)  # NodeGroups' debug line counts nodes: let it settle
    assert await through.NodeGroups(pb.NodeGroupsRequest()) == \
        await direct.NodeGroups(pb.NodeGroupsRequest())


async def test_refusals_pass_through_and_are_never_kept(
        fronted: tuple[Any, Any, Front]) -> None:
    direct, through, front = fronted
    for call in ("NodeGroupTemplateNodeInfo", "NodeGroupTargetSize"):
        request = (pb.NodeGroupTemplateNodeInfoRequest(id="nope") if call.endswith("Info")
                   else pb.NodeGroupTargetSizeRequest(id="nope"))
        refusals = []
        for stub in (direct, through, through):
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await getattr(stub, call)(request)
            refusals.append((caught.value.code(), caught.value.details()))
        assert refusals[0][0] == grpc.StatusCode.NOT_FOUND
        assert refusals == [refusals[0]] * 3
        assert front.forwards(call) == 2


async def test_sigterm_stops_the_front_cleanly(fronted: tuple[Any, Any, Front]) -> None:
    _, through, front = fronted
    assert (await through.GPULabel(pb.GPULabelRequest())).label
    front.process.send_signal(signal.SIGTERM)
    assert front.process.wait(timeout=30) == 0
    assert '"msg":"stopped"' in front.log.read_text()
