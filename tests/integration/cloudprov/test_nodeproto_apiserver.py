"""A real API server decodes the template's nodeBytes: an independent check of every field
number in proto/k8s/api/core/v1/node.proto.

The bytes are what NodeGroupTemplateNodeInfo serves. Wrapped in the API server's protobuf
envelope they are POSTed as ``application/vnd.kubernetes.protobuf``; the Node read back as
JSON must say what the manifest they were encoded from says. A wrong field number would
land a value in another field, or be dropped as unknown.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes_asyncio import client

from simkube.cloudprov.manifests import template_node
from simkube.cloudprov.nodeproto import encode_node
from simkube.gen.clusterautoscaler.cloudprovider.v1.externalgrpc import externalgrpc_pb2 as pb
from simkube.gen.k8s.apimachinery.pkg.runtime import unknown_pb2
from tests.integration.cloudprov.conftest import Harness

pytestmark = pytest.mark.integration
PROTOBUF = "application/vnd.kubernetes.protobuf"


async def post_protobuf(kube: client.ApiClient, path: str, raw: bytes) -> tuple[int, Any]:
    envelope = unknown_pb2.Unknown(raw=raw)
    envelope.typeMeta.apiVersion = "v1"
    envelope.typeMeta.kind = "Node"
    headers = {"Content-Type": PROTOBUF, "Accept": "application/json"}
    await kube.update_params_for_auth(headers, [], ["BearerToken"])
    session = kube.rest_client.pool_manager
    async with session.post(kube.configuration.host + path, headers=headers,
                            data=b"k8s\x00" + envelope.SerializeToString()) as reply:
        return reply.status, json.loads(await reply.read())


async def test_the_api_server_reads_template_bytes_as_the_manifest(
        harness: Harness, kube: client.ApiClient) -> None:
    group = f"proto-{harness.suffix}"
    await harness.start([{"id": group, "maxSize": 2, "nodeFile": "m5.yaml"}])
    reply = await harness.stub.NodeGroupTemplateNodeInfo(
        pb.NodeGroupTemplateNodeInfoRequest(id=group))
    assert harness.config is not None
    manifest = template_node(harness.config.groups[group], namespace=harness.namespace)
    assert manifest["metadata"]["labels"]["team"] == "payments"  # from the production Node

    # Dry run: the API server decodes, admits and defaults the Node, and stores nothing.
    status, node = await post_protobuf(kube, "/api/v1/nodes?dryRun=All", reply.nodeBytes)
    assert status == 201, node
    assert node["metadata"]["name"] == manifest["metadata"]["name"]
    assert node["metadata"]["labels"] == manifest["metadata"]["labels"]
    assert node["metadata"]["annotations"] == manifest["metadata"]["annotations"]
    assert node["spec"]["providerID"] == manifest["spec"]["providerID"]
    assert "unschedulable" not in node["spec"]
    # Admission adds node.kubernetes.io/not-ready to every new Node; the rest is ours.
    assert [t for t in node["spec"]["taints"] if t["key"] != "node.kubernetes.io/not-ready"] \
        == manifest["spec"]["taints"]
    assert node["status"]["capacity"] == manifest["status"]["capacity"]
    assert node["status"]["allocatable"] == manifest["status"]["allocatable"]
    condition = node["status"]["conditions"][0]
    assert {k: condition[k] for k in ("type", "status", "reason", "message")} == \
        manifest["status"]["conditions"][0]
    info = node["status"]["nodeInfo"]
    assert {k: info[k] for k in ("kubeletVersion", "operatingSystem", "architecture")} == \
        manifest["status"]["nodeInfo"]

    # The one field a template never sets, checked on its own.
    manifest["spec"]["unschedulable"] = True
    status, node = await post_protobuf(kube, "/api/v1/nodes?dryRun=All", encode_node(manifest))
    assert status == 201, node
    assert node["spec"]["unschedulable"] is True
