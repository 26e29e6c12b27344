"""sk-cloudprov running in-process against the session's real cluster, one per test.

Each test gets its own sk-cloudprov namespace (the ``namespace`` fixture), its own
infrastructure node and group ids made unique with the namespace's suffix, because Nodes are
cluster-wide and tests share the cluster. Teardown stops sk-cloudprov and deletes the Nodes
it made; deleting the namespace removes the Deployments and placeholder pods.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml

from simkube.cloudprov.app import CloudProvider
from simkube.cloudprov.config import CloudConfig, load_file
from simkube.cloudprov.naming import OWNER_LABEL
from simkube.core.kubeapi import ApiError, KubeClient
from simkube.gen.clusterautoscaler.cloudprovider.v1.externalgrpc import externalgrpc_pb2 as pb
from simkube.gen.clusterautoscaler.cloudprovider.v1.externalgrpc import (
    externalgrpc_pb2_grpc as pb_grpc,
)
from tests.conftest import SimEnv
from tests.support.kube import eventually

PRODUCTION_NODE = Path(__file__).parents[2] / "unit" / "cloudprov" / "data" / "m5-node.yaml"
WAIT = 120.0  # generous: the machine's CPUs are shared with other test runs


@dataclass
class Harness:
    """One sk-cloudprov and a CA-like client of it."""

    api: KubeClient
    namespace: str
    suffix: str
    directory: Path
    config: CloudConfig | None = None
    provider: CloudProvider | None = None
    stub: Any = None
    _channel: grpc.aio.Channel | None = None

    def write_config(self, groups: list[dict[str, Any]], *,
                     provisioning: dict[str, str] | None = None) -> Path:
        path = self.directory / "config.yaml"
        # Instant provisioning unless a test times it: most are about the RPCs, not about
        # time (the provisioning unit tests and the autoscaler tier time it).
        path.write_text(yaml.safe_dump({
            "namespace": self.namespace, "infraNode": f"infra-{self.namespace}",
            "provisioning": provisioning or {"delay": "0s", "readyAfter": "0s"},
            "nodeGroups": groups}))
        (self.directory / "m5.yaml").write_text(PRODUCTION_NODE.read_text())
        return path

    async def start(self, groups: list[dict[str, Any]] | None = None, *,
                    provisioning: dict[str, str] | None = None) -> None:
        if groups is not None:
            self.config = load_file(self.write_config(groups, provisioning=provisioning))
        assert self.config is not None
        self.provider = CloudProvider(config=self.config, api=self.api, listen="127.0.0.1:0",
                                      grace=1)
        await self.provider.start()
        self._channel = grpc.aio.insecure_channel(f"127.0.0.1:{self.provider.port}")
        self.stub = pb_grpc.CloudProviderStub(self._channel)

    async def stop(self) -> None:
        if self._channel is not None:
            await self._channel.close()
            self._channel = None
        if self.provider is not None:
            await self.provider.stop()
            self.provider = None

    async def target(self, group: str) -> int:
        reply = await self.stub.NodeGroupTargetSize(pb.NodeGroupTargetSizeRequest(id=group))
        return int(reply.targetSize)

    async def instances(self, group: str) -> dict[str, int]:
        reply = await self.stub.NodeGroupNodes(pb.NodeGroupNodesRequest(id=group))
        return {i.id: i.status.instanceState for i in reply.instances}

    async def running(self, group: str, count: int) -> dict[str, int]:
        async def probe() -> dict[str, int] | None:
            states = await self.instances(group)
            ok = len(states) == count and all(s == pb.InstanceStatus.instanceRunning
                                              for s in states.values())
            return states if ok else None
        return await eventually(probe, timeout=WAIT, what=f"{count} running in {group}")

    async def nodes(self) -> dict[str, dict[str, Any]]:
        found = await self.api.request("GET", "/api/v1/nodes",
                                       query={"labelSelector": f"{OWNER_LABEL}={self.namespace}"})
        return {n["metadata"]["name"]: n for n in found.get("items") or []}

    async def pods(self) -> dict[str, dict[str, Any]]:
        found = await self.api.request("GET", f"/api/v1/namespaces/{self.namespace}/pods")
        return {p["metadata"]["name"]: p for p in found.get("items") or []}


@pytest.fixture
async def harness(sim_env: SimEnv, namespace: str, tmp_path: Path) -> AsyncIterator[Harness]:
    api = await KubeClient.connect(kubeconfig=Path(sim_env.kubeconfig), pool_size=100,
                                   concurrency=64)  # as sk-cloudprov's main does
    harness = Harness(api=api, namespace=namespace, suffix=namespace[-6:], directory=tmp_path)
    try:
        yield harness
    finally:
        await harness.stop()
        names = [*await harness.nodes(), f"infra-{namespace}"]
        await asyncio.gather(*(_delete(api, f"/api/v1/nodes/{n}") for n in names))
        await api.close()


async def _delete(api: KubeClient, path: str) -> None:
    with contextlib.suppress(ApiError):  # cleanup: already gone is fine
        await api.request("DELETE", path)

