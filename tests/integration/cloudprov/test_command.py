"""The real ``sk-cloudprov`` command: config from a ConfigMap, mTLS, health, reflection,
Prometheus metrics, graceful shutdown on SIGTERM."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import pytest
import yaml
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from simkube.env.controlplane.certs import generate_pki
from simkube.gen.clusterautoscaler.cloudprovider.v1.externalgrpc import externalgrpc_pb2 as pb
from simkube.gen.clusterautoscaler.cloudprovider.v1.externalgrpc import (
    externalgrpc_pb2_grpc as pb_grpc,
)
from tests.conftest import SimEnv
from tests.integration.cloudprov.conftest import PRODUCTION_NODE, WAIT, Harness
from tests.support.kube import eventually

pytestmark = pytest.mark.integration
COMMAND = str(Path(sys.executable).parent / "sk-cloudprov")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def pki(tmp_path: Path) -> Path:
    generate_pki(tmp_path / "pki")
    return tmp_path / "pki"


@pytest.fixture
async def group(harness: Harness) -> str:
    """A ConfigMap holding the config (and, under another key, the node template)."""
    group = f"cm-{harness.suffix}"
    await harness.api.request("POST", f"/api/v1/namespaces/{harness.namespace}/configmaps",
                              body={"apiVersion": "v1", "kind": "ConfigMap",
                                    "metadata": {"name": "groups"},
                                    "data": {"config.yaml": yaml.safe_dump({
                                        "namespace": harness.namespace,
                                        "infraNode": f"infra-{harness.namespace}",
                                        "nodeGroups": [{"id": group, "minSize": 2, "maxSize": 4,
                                                        "nodeFile": "m5.yaml"}]}),
                                        "m5.yaml": PRODUCTION_NODE.read_text()}})
    return group


@pytest.fixture
def served(harness: Harness, group: str, sim_env: SimEnv, pki: Path,
           tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], int, int]]:
    port, metrics = free_port(), free_port()
    log = (tmp_path / "sk-cloudprov.log").open("w")
    process = subprocess.Popen(
        [COMMAND, "--config", f"configmap:{harness.namespace}/groups",
         "--kubeconfig", sim_env.kubeconfig, "--listen", f"127.0.0.1:{port}",
         "--metrics-listen", f"127.0.0.1:{metrics}", "--tls-cert", str(pki / "apiserver.crt"),
         "--tls-key", str(pki / "apiserver.key"), "--tls-client-ca", str(pki / "ca.crt"),
         "--log-json"], stdout=log, stderr=subprocess.STDOUT, text=True)
    try:
        yield process, port, metrics
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)
        log.close()


async def test_the_command_serves_mutual_tls_from_a_configmap(
        group: str, served: tuple[subprocess.Popen[str], int, int], pki: Path,
        tmp_path: Path) -> None:
    process, port, metrics = served
    ca = (pki / "ca.crt").read_bytes()
    client = grpc.ssl_channel_credentials(
        root_certificates=ca, private_key=(pki / "admin.key").read_bytes(),
        certificate_chain=(pki / "admin.crt").read_bytes())
    target = f"localhost:{port}"
    async with grpc.aio.secure_channel(target, client) as channel:
        health = health_pb2_grpc.HealthStub(channel)

        async def serving() -> bool:
            try:
                reply = await health.Check(health_pb2.HealthCheckRequest(
                    service="clusterautoscaler.cloudprovider.v1.externalgrpc.CloudProvider"),
                    timeout=2)
            except grpc.aio.AioRpcError:
                assert process.poll() is None, "sk-cloudprov exited"
                return False
            return reply.status == health_pb2.HealthCheckResponse.SERVING
        await eventually(serving, timeout=WAIT, what="sk-cloudprov serving", interval=0.5)

        stub = pb_grpc.CloudProviderStub(channel)
        groups = (await stub.NodeGroups(pb.NodeGroupsRequest())).nodeGroups
        assert [(g.id, g.minSize, g.maxSize) for g in groups] == [(group, 2, 4)]

        async def two_running() -> bool:
            reply = await stub.NodeGroupNodes(pb.NodeGroupNodesRequest(id=group))
            return [i.status.instanceState for i in reply.instances] == \
                [pb.InstanceStatus.instanceRunning] * 2
        await eventually(two_running, timeout=WAIT, what="the minSize nodes running")

        reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        async for response in reflection.ServerReflectionInfo(iter([request])):
            names = {s.name for s in response.list_services_response.service}
            assert "clusterautoscaler.cloudprovider.v1.externalgrpc.CloudProvider" in names
            break

    anonymous = grpc.ssl_channel_credentials(root_certificates=ca)
    async with grpc.aio.secure_channel(target, anonymous) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await pb_grpc.CloudProviderStub(channel).NodeGroups(pb.NodeGroupsRequest(), timeout=5)
        assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
    async with grpc.aio.insecure_channel(target) as channel:
        with pytest.raises(grpc.aio.AioRpcError):
            await pb_grpc.CloudProviderStub(channel).NodeGroups(pb.NodeGroupsRequest(), timeout=5)

    async with httpx.AsyncClient() as web:
        scrape = ""

        async def gauges() -> bool:
            nonlocal scrape
            scrape = (await web.get(f"http://127.0.0.1:{metrics}/metrics")).text
            return f'sk_cloudprov_node_group_instances{{group="{group}",state="running"}} 2.0' \
                in scrape
        await eventually(gauges, timeout=WAIT, what="the group gauges")
    assert f'sk_cloudprov_node_group_target_size{{group="{group}"}} 2.0' in scrape
    assert 'grpc_server_handled_total{code="OK",method="NodeGroups"} 1.0' in scrape
    assert 'grpc_server_handling_seconds_bucket{le="0.001",method="NodeGroupNodes"}' in scrape

    process.send_signal(signal.SIGTERM)
    assert await asyncio.to_thread(process.wait, 30) == 0
    # Our log is JSON lines (gRPC's C core may add its own plain lines about handshakes).
    lines = (tmp_path / "sk-cloudprov.log").read_text().splitlines()
    events = [json.loads(line) for line in lines if line.startswith("{")]
    assert {"sk-cloudprov ready", "stopped"} <= {e["event"] for e in events}
    assert all({"timestamp", "level"} <= set(e) for e in events)


async def test_a_bad_configmap_stops_the_command_with_the_group_and_field(
        harness: Harness, sim_env: SimEnv) -> None:
    await harness.api.request("POST", f"/api/v1/namespaces/{harness.namespace}/configmaps",
                              body={"apiVersion": "v1", "kind": "ConfigMap",
                                    "metadata": {"name": "bad"},
                                    "data": {"config.yaml": "nodeGroups: [{id: web, maxSize: 3, "
                                                            "nodeFile: web.yaml}]"}})
    for reference, message in [
        (f"configmap:{harness.namespace}/bad",
         f"error: ConfigMap {harness.namespace}/bad key config.yaml: node group 'web': "
         f"nodeFile: ConfigMap {harness.namespace}/bad has no key 'web.yaml' (keys: config.yaml)"),
        (f"configmap:{harness.namespace}/absent",
         f"error: cannot read ConfigMap {harness.namespace}/absent: NotFound (404)")]:
        result = await asyncio.to_thread(
            subprocess.run, [COMMAND, "--config", reference, "--kubeconfig", sim_env.kubeconfig],
            capture_output=True, text=True, timeout=120, check=False)
        assert result.returncode == 2
        assert result.stderr.startswith(message), result.stderr
