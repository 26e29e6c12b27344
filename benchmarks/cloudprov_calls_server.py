"""A server for ``benchmarks/cloudprov_calls.py``: sk-cloudprov's servicer over 1,000 nodes.

Run as ``python -m benchmarks.cloudprov_calls_server VARIANT HOST:PORT``; it prints
``serving`` once it listens and serves until terminated. The index is the real
``ClusterIndex`` fed the Nodes and placeholder pods that sk-cloudprov would have watched, so
every answer takes the production code path; no API server is involved because the read
RPCs CA makes every loop never reach it.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine, Sequence
from concurrent import futures
from enum import Enum
from typing import Any, cast

import grpc

from simkube.cloudprov.config import CloudConfig, parse
from simkube.cloudprov.index import ClusterIndex, Kind
from simkube.cloudprov.manifests import fake_node
from simkube.cloudprov.naming import GROUP_LABEL
from simkube.cloudprov.scaling import Scaler
from simkube.cloudprov.servicer import CloudProviderServicer
from simkube.core.kubeapi import KubeClient
from simkube.core.serving import Service
from simkube.gen.clusterautoscaler.cloudprovider.v1.externalgrpc import externalgrpc_pb2 as pb
from simkube.gen.clusterautoscaler.cloudprovider.v1.externalgrpc import (
    externalgrpc_pb2_grpc as pb_grpc,
)

NAMESPACE = "sk-bench"
GROUPS = 5
PER_GROUP = 200
THREADS = 4
READS = ("NodeGroupForNode", "NodeGroupGetOptions", "NodeGroupTargetSize", "NodeGroups",
         "NodeGroupNodes", "NodeGroupTemplateNodeInfo", "Refresh")


class Variant(Enum):
    SK_CLOUDPROV = "sk-cloudprov"
    AIO_BARE = "aio-bare"
    THREADS = "threads"


def build() -> tuple[CloudConfig, CloudProviderServicer]:
    config = parse({"namespace": NAMESPACE, "nodeGroups": [
        {"id": f"pool-{n}", "minSize": PER_GROUP, "maxSize": PER_GROUP * 2,
         "pricePerHour": 0.384, "shape": {"cpu": 8, "memory": "32Gi",
                                          "instanceType": "m5.2xlarge", "zone": "sim-a"}}
        for n in range(GROUPS)]}, source="benchmark", read=lambda ref, what: {})
    index = ClusterIndex(groups=config.groups)
    nodes, pods = [], []
    for group in config.groups.values():
        for number in range(PER_GROUP):
            name = f"{group.id}-x-{number:05d}"
            node = fake_node(group, namespace=NAMESPACE, name=name, pod_cidr=None)
            node["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
            nodes.append(node)
            pods.append({"metadata": {"name": name, "labels": {GROUP_LABEL: group.id}},
                         "status": {"phase": "Running"}})
    index.listed(Kind.POD, pods)
    index.listed(Kind.NODE, nodes)
    for state in index.groups.values():
        state.replicas = PER_GROUP
    # The scaler is never used: the benchmark makes only read RPCs, which answer from the index.
    scaler = Scaler(api=cast(KubeClient, None), index=index, config=config)
    return config, CloudProviderServicer(config=config, index=index, scaler=scaler)


def _completed(call: Coroutine[Any, Any, Any]) -> Any:
    """The result of a coroutine that finishes without waiting (every read RPC here)."""
    try:
        call.send(None)
    except StopIteration as done:
        return done.value
    call.close()
    raise RuntimeError("a read RPC waited; the threads variant cannot serve it")


def _refused(request: Any, context: grpc.ServicerContext) -> Any:
    context.abort(grpc.StatusCode.UNIMPLEMENTED, "the threads variant serves reads only")


class _Blocking:
    """The read RPCs of ``servicer`` as plain methods, for grpcio's synchronous server."""

    def __init__(self, servicer: CloudProviderServicer) -> None:
        for method in pb.DESCRIPTOR.services_by_name["CloudProvider"].methods:
            if method.name not in READS:
                setattr(self, method.name, _refused)
                continue
            call = getattr(servicer, method.name)
            setattr(self, method.name, lambda request, context, call=call:
                    _completed(call(request, context)))


async def _serve_aio(variant: Variant, listen: str, servicer: CloudProviderServicer) -> None:
    if variant is Variant.SK_CLOUDPROV:
        service = Service(name="bench", listen=listen)

        def register(server: grpc.aio.Server) -> Sequence[str]:
            pb_grpc.add_CloudProviderServicer_to_server(servicer, server)
            return []
        await service.start(register)
        print("serving", flush=True)
        await service.run_until_signalled()
        return
    server = grpc.aio.server()
    pb_grpc.add_CloudProviderServicer_to_server(servicer, server)
    server.add_insecure_port(listen)
    await server.start()
    print("serving", flush=True)
    await server.wait_for_termination()


def main(argv: list[str]) -> None:
    variant, listen = Variant(argv[0]), argv[1]
    _, servicer = build()
    if variant is Variant.THREADS:
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=THREADS))
        pb_grpc.add_CloudProviderServicer_to_server(
            cast(pb_grpc.CloudProviderServicer, _Blocking(servicer)), server)
        server.add_insecure_port(listen)
        server.start()
        print("serving", flush=True)
        server.wait_for_termination()
    else:
        asyncio.run(_serve_aio(variant, listen, servicer))


if __name__ == "__main__":
    main(sys.argv[1:])
