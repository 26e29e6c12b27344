"""The CloudProvider RPCs: requests checked, answered from the index, mapped to status codes.

Reads (NodeGroupForNode, TargetSize, NodeGroupNodes, ...) never touch the API server; they
look at the index and return. Size changes go to the ``Scaler``. Every refusal is one of
``core.errors``' categories with a message naming the group, node or field, turned into its
status code here: an unknown group id is NOT_FOUND, a malformed request INVALID_ARGUMENT, a
size past min or max OUT_OF_RANGE, a request the group's state forbids FAILED_PRECONDITION.
NodeGroupForNode never fails for a node it does not know — CA asks about every node,
including ones it invented — it answers an empty group.
"""

# The method names are the protocol's RPC names.
# ruff: noqa: N802

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import grpc
from google.protobuf import any_pb2

from simkube.cloudprov.config import CloudConfig, NodeGroupConfig
from simkube.cloudprov.current_run import CurrentRun
from simkube.cloudprov.index import ClusterIndex
from simkube.cloudprov.listing import InstanceListing
from simkube.cloudprov.manifests import template_node
from simkube.cloudprov.naming import GROUP_LABEL, OWNER_LABEL, instance_name
from simkube.cloudprov.nodeproto import encode_node
from simkube.cloudprov.pricing import UnitPrices, price_over
from simkube.cloudprov.scaling import Scaler
from simkube.core.errors import InvalidArgumentError, NotFoundError, SimkubeError
from simkube.core.logs import get_logger
from simkube.core.serving import status_code
from simkube.gen.clusterautoscaler.cloudprovider.v1.externalgrpc import externalgrpc_pb2 as pb
from simkube.gen.clusterautoscaler.cloudprovider.v1.externalgrpc import (
    externalgrpc_pb2_grpc as pb_grpc,
)

log = get_logger(__name__)

Context = grpc.aio.ServicerContext[Any, Any]
Req = TypeVar("Req")
Resp = TypeVar("Resp")
S = TypeVar("S", bound="CloudProviderServicer")
# CA's externalgrpc client gives each call grpc_timeout (5s by default); without a deadline
# a size change may take this long before answering UNAVAILABLE.
DEFAULT_BUDGET = 30.0
# Answers that never change, built once (gRPC serializes a message without changing it).
NO_GROUP = pb.NodeGroupForNodeResponse(nodeGroup=pb.NodeGroup(id=""))
NO_OPTIONS = pb.NodeGroupAutoscalingOptionsResponse()


def answers(method: Callable[[S, Req, Context], Awaitable[Resp]],
            ) -> Callable[[S, Req, Context], Coroutine[Any, Any, Resp]]:
    """Turn a ``SimkubeError`` raised by ``method`` into its status code and message."""
    @functools.wraps(method)
    async def wrapped(self: S, request: Req, context: Context) -> Resp:
        try:
            return await method(self, request, context)
        except SimkubeError as exc:
            log.info("request refused", rpc=method.__name__, code=exc.status.name, error=str(exc))
            await context.abort(status_code(exc), str(exc))
            raise  # abort() raises; this line satisfies the type checker
    return wrapped


class CloudProviderServicer(pb_grpc.CloudProviderServicer):
    def __init__(self, *, config: CloudConfig, index: ClusterIndex, scaler: Scaler,
                 current: CurrentRun | None = None) -> None:
        self._config = config
        self._current = current or CurrentRun()
        self._index = index
        self._scaler = scaler
        self._templates = {g.id: encode_node(template_node(g, namespace=config.namespace))
                           for g in config.groups.values()}
        self._listings = {group: InstanceListing() for group in config.groups}
        # NodeGroupForNode's answer per group, built once: CA asks for every node, every loop,
        # and an answer that depends on the configuration alone is one a cache in front of
        # sk-cloudprov may keep (docs/cloudprov.md, the front). The live sizes are NodeGroups'.
        self._answers = {g.id: pb.NodeGroupForNodeResponse(nodeGroup=pb.NodeGroup(
            id=g.id, minSize=g.min_size, maxSize=g.max_size,
            debug=f"{g.id}: {g.template.summary}, {g.price_per_hour}/h"))
            for g in config.groups.values()}
        self._unit_prices = UnitPrices.cheapest(
            (g.price_per_hour, g.template.allocatable) for g in config.groups.values())

    def _group(self, group_id: str) -> NodeGroupConfig:
        if not group_id:
            raise InvalidArgumentError("the node group id is empty")
        group = self._config.groups.get(group_id)
        if group is None:
            raise NotFoundError(f"no node group {group_id!r}; sk-cloudprov serves "
                                f"{', '.join(self._config.groups)}")
        return group

    def _message(self, group: NodeGroupConfig) -> pb.NodeGroup:
        state = self._index.groups[group.id]
        debug = (f"{group.id}: target {state.replicas}, {len(state.nodes)} nodes, "
                 f"{group.template.summary}, {group.price_per_hour}/h")
        return pb.NodeGroup(id=group.id, minSize=group.min_size, maxSize=group.max_size,
                            debug=debug)

    def group_of_node(self, node: pb.ExternalGrpcNode) -> str | None:
        for name in (instance_name(node.providerID), node.name):
            group = self._index.group_of(name) if name else None
            if group:
                return group
        # A renamed copy of a template (CA's price expander asks about those) keeps its labels.
        label = node.labels.get(GROUP_LABEL)
        if label in self._config.groups and node.labels.get(OWNER_LABEL) == self._config.namespace:
            return label
        return None

    @staticmethod
    def _deadline(context: Context) -> float:
        remaining = context.time_remaining()
        budget = DEFAULT_BUDGET if remaining is None else min(remaining - 0.2, DEFAULT_BUDGET)
        return asyncio.get_running_loop().time() + budget

    @answers
    async def NodeGroups(self, request: pb.NodeGroupsRequest,
                         context: Context) -> pb.NodeGroupsResponse:
        return pb.NodeGroupsResponse(
            nodeGroups=[self._message(g) for g in self._config.groups.values()])

    @answers
    async def NodeGroupForNode(self, request: pb.NodeGroupForNodeRequest,
                               context: Context) -> pb.NodeGroupForNodeResponse:
        group = self.group_of_node(request.node)
        if group is None:
            return NO_GROUP
        return self._answers[group]

    @answers
    async def PricingNodePrice(self, request: pb.PricingNodePriceRequest,
                               context: Context) -> pb.PricingNodePriceResponse:
        group = self.group_of_node(request.node)
        if group is None:
            raise NotFoundError(f"node {request.node.name or request.node.providerID!r} belongs "
                                f"to no node group, so it has no price")
        price = price_over(
            per_hour=self._config.groups[group].price_per_hour,
            start=request.startTimestamp if request.HasField("startTimestamp") else None,
            end=request.endTimestamp if request.HasField("endTimestamp") else None)
        return pb.PricingNodePriceResponse(price=price)

    @answers
    async def PricingPodPrice(self, request: pb.PricingPodPriceRequest,
                              context: Context) -> pb.PricingPodPriceResponse:
        per_hour = self._unit_prices.pod_per_hour(request.pod_bytes)
        return pb.PricingPodPriceResponse(price=price_over(
            per_hour=per_hour,
            start=request.startTimestamp if request.HasField("startTimestamp") else None,
            end=request.endTimestamp if request.HasField("endTimestamp") else None))

    @answers
    async def GPULabel(self, request: pb.GPULabelRequest,
                       context: Context) -> pb.GPULabelResponse:
        return pb.GPULabelResponse(label=self._config.gpu_label)

    @answers
    async def GetAvailableGPUTypes(self, request: pb.GetAvailableGPUTypesRequest,
                                   context: Context) -> pb.GetAvailableGPUTypesResponse:
        return pb.GetAvailableGPUTypesResponse(
            gpuTypes={name: any_pb2.Any() for name in self._config.gpu_types})

    @answers
    async def Cleanup(self, request: pb.CleanupRequest, context: Context) -> pb.CleanupResponse:
        return pb.CleanupResponse()

    @answers
    async def Refresh(self, request: pb.RefreshRequest, context: Context) -> pb.RefreshResponse:
        return pb.RefreshResponse()  # the watches keep everything fresh already

    @answers
    async def NodeGroupTargetSize(self, request: pb.NodeGroupTargetSizeRequest,
                                  context: Context) -> pb.NodeGroupTargetSizeResponse:
        group = self._group(request.id)
        return pb.NodeGroupTargetSizeResponse(targetSize=self._scaler.replicas(group.id))

    @answers
    async def NodeGroupIncreaseSize(self, request: pb.NodeGroupIncreaseSizeRequest,
                                    context: Context) -> pb.NodeGroupIncreaseSizeResponse:
        group = self._group(request.id)
        await self._scaler.increase(group.id, request.delta, deadline=self._deadline(context))
        return pb.NodeGroupIncreaseSizeResponse()

    @answers
    async def NodeGroupDeleteNodes(self, request: pb.NodeGroupDeleteNodesRequest,
                                   context: Context) -> pb.NodeGroupDeleteNodesResponse:
        group = self._group(request.id)
        names = []
        for index, node in enumerate(request.nodes):
            name = instance_name(node.providerID) or node.name
            if not name:
                raise InvalidArgumentError(f"nodes[{index}] has neither providerID nor name")
            names.append(name)
        await self._scaler.delete_nodes(group.id, names, deadline=self._deadline(context))
        return pb.NodeGroupDeleteNodesResponse()

    @answers
    async def NodeGroupDecreaseTargetSize(
            self, request: pb.NodeGroupDecreaseTargetSizeRequest,
            context: Context) -> pb.NodeGroupDecreaseTargetSizeResponse:
        group = self._group(request.id)
        await self._scaler.decrease(group.id, request.delta, deadline=self._deadline(context))
        return pb.NodeGroupDecreaseTargetSizeResponse()

    @answers
    async def NodeGroupNodes(self, request: pb.NodeGroupNodesRequest,
                             context: Context) -> pb.NodeGroupNodesResponse:
        group = self._group(request.id)
        return self._listings[group.id].response(self._index.groups[group.id])

    @answers
    async def NodeGroupTemplateNodeInfo(
            self, request: pb.NodeGroupTemplateNodeInfoRequest,
            context: Context) -> pb.NodeGroupTemplateNodeInfoResponse:
        group = self._group(request.id)
        return pb.NodeGroupTemplateNodeInfoResponse(nodeBytes=self._templates[group.id])

    @answers
    async def NodeGroupGetOptions(self, request: pb.NodeGroupAutoscalingOptionsRequest,
                                  context: Context) -> pb.NodeGroupAutoscalingOptionsResponse:
        group = self._group(request.id)
        if not group.overrides.values:
            # CA's externalgrpc client (1.36.1 and master as of 2026-11) turns options into
            # ones whose MaxNodeStartupTime is 0, which the proto cannot carry: a registered
            # Node that is not Ready yet would count as unready instead of upcoming, and CA
            # would scale up again. An answer without options keeps all of CA's defaults:
            # every caller in CA treats nil options as it treats UNIMPLEMENTED, and CA asks
            # this twice per node per loop, so the answer is a ready object, not an error.
            return NO_OPTIONS
        return pb.NodeGroupAutoscalingOptionsResponse(
            nodeGroupAutoscalingOptions=group.overrides.apply(
                request.defaults, scale=self._current.scale))
