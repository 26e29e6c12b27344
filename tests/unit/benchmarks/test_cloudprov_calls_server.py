"""The call benchmark's server: the real servicer over 1,000 nodes, and its blocking adapter."""

from __future__ import annotations

import asyncio

import pytest

from benchmarks.cloudprov_calls_server import GROUPS, PER_GROUP, _completed, build
from simkube.gen.clusterautoscaler.cloudprovider.v1.externalgrpc import externalgrpc_pb2 as pb

pytestmark = pytest.mark.unit


def test_every_node_has_its_group() -> None:
    config, servicer = build()
    assert len(config.groups) == GROUPS
    found = {servicer.group_of_node(pb.ExternalGrpcNode(providerID=f"simkube://{g}-x-00199"))
             for g in config.groups}
    assert found == set(config.groups)
    assert servicer.group_of_node(pb.ExternalGrpcNode(name=f"pool-0-x-{PER_GROUP:05d}")) is None


def test_a_read_rpc_completes_without_an_event_loop() -> None:
    _, servicer = build()
    request = pb.NodeGroupForNodeRequest(node=pb.ExternalGrpcNode(name="pool-3-x-00007"))
    reply = _completed(servicer.NodeGroupForNode(request, None))  # type: ignore[arg-type]
    assert reply.nodeGroup.id == "pool-3"


def test_a_call_that_waits_is_refused() -> None:
    async def waits() -> None:
        await asyncio.sleep(0)
    with pytest.raises(RuntimeError, match="waited"):
        _completed(waits())
