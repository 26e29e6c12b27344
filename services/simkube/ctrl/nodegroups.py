"""Node groups before a run: read sk-cloudprov's config, reset each group to its minimum.

Repetitions are only comparable when each starts from the same cluster, and a previous run
leaves the autoscaler's groups wherever it scaled them. sk-cloudprov backs each group with a
Deployment of placeholder pods (one per Node), so setting the Deployment's replicas to the
group's minSize and waiting until the group's Nodes and placeholder pods (its instances) both
number exactly that puts every run on the same footing. The pods count until they are gone:
CA caches each group's instances for two minutes from its start, so an instance still
terminating when the run's CA starts would stay in its view as an unregistered node, upcoming
capacity that never comes (it made the second repetition of a seeded run plan
differently). Where Karpenter makes the nodes instead (it has no minimum), every run starts
from none of its nodes. The same config gives the recorder each group's price.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from simkube.cloudprov import config as cloud_config
from simkube.cloudprov.naming import GROUP_LABEL
from simkube.core.errors import SimkubeError
from simkube.core.kubeapi import (
    CONFIG_MAPS,
    DEPLOYMENTS,
    MERGE_PATCH,
    NODE_CLAIMS,
    NODE_POOLS,
    NODES,
    PODS,
    ApiError,
    KubeClient,
    poll,
)
from simkube.core.logs import get_logger

log = get_logger(__name__)
CONFIGMAP_PREFIX = "configmap:"
RESET_TIMEOUT = 180.0


class NodeGroupError(SimkubeError):
    """The node groups could not be read or reset; the message says which and why."""


async def load(kube: KubeClient, reference: str) -> cloud_config.CloudConfig:
    """The config at ``reference``: a file path on this host or ``configmap:NS/NAME``."""
    if reference.startswith(CONFIGMAP_PREFIX):
        namespace, _, name = reference.removeprefix(CONFIGMAP_PREFIX).partition("/")
        if not namespace or not name or "/" in name:
            raise NodeGroupError(f"node groups {reference!r}: write configmap:NAMESPACE/NAME")
        try:
            found = await kube.request("GET", CONFIG_MAPS.path(namespace=namespace, name=name))
        except ApiError as exc:
            raise NodeGroupError(f"cannot read ConfigMap {namespace}/{name}: {exc}") from None
        return cloud_config.from_configmap(found.get("data") or {}, namespace=namespace,
                                           name=name)
    return await asyncio.to_thread(cloud_config.load_file, Path(reference))


def prices(config: cloud_config.CloudConfig | None) -> dict[str, float]:
    """Group id → price per hour, what the recorder needs."""
    if config is None:
        return {}
    return {group.id: group.price_per_hour for group in config.groups.values()}


async def count_nodes(kube: KubeClient, group: str) -> int:
    listing = await kube.request("GET", NODES.path(),
                                 query={"labelSelector": f"{GROUP_LABEL}={group}"})
    return sum(1 for node in listing.get("items", [])
               if not node.get("metadata", {}).get("deletionTimestamp"))


async def count_instances(kube: KubeClient, *, namespace: str, group: str) -> int:
    """The group's placeholder pods, those on their way out included."""
    listing = await kube.request("GET", PODS.path(namespace=namespace),
                                 query={"labelSelector": f"{GROUP_LABEL}={group}"})
    return len(listing.get("items", []))


async def reset(kube: KubeClient, config: cloud_config.CloudConfig, *,
                timeout: float = RESET_TIMEOUT) -> None:
    """Every group at its minSize, Nodes included; ``NodeGroupError`` when one is not."""
    if await karpenter_provides(kube, config):
        await _reset_karpenter(kube, config, timeout=timeout)
        return
    for group in config.groups.values():
        path = DEPLOYMENTS.path(namespace=config.namespace, name=group.id)
        try:
            await kube.request("PATCH", path, body={"spec": {"replicas": group.min_size}},
                               content_type=MERGE_PATCH)
        except ApiError as exc:
            hint = " (is sk-cloudprov running with this config?)" if exc.code == 404 else ""
            raise NodeGroupError(f"cannot reset node group {group.id!r}: {exc}{hint}") from None
    for group in config.groups.values():
        wanted = group.min_size

        async def settled(group_id: str = group.id, wanted: int = wanted) -> bool:
            return (await count_nodes(kube, group_id) == wanted
                    and await count_instances(kube, namespace=config.namespace,
                                              group=group_id) == wanted)
        if not await poll(settled, timeout=timeout, interval=0.25):
            nodes = await count_nodes(kube, group.id)
            instances = await count_instances(kube, namespace=config.namespace, group=group.id)
            raise NodeGroupError(f"node group {group.id!r} has {nodes} Nodes and {instances} "
                                 f"instances, not its minSize {wanted}, after {timeout:.0f}s")
        log.info("node group reset", group=group.id, nodes=wanted)


async def karpenter_provides(kube: KubeClient, config: cloud_config.CloudConfig) -> bool:
    """Whether Karpenter, not sk-cloudprov, makes the groups' nodes here: none of
    sk-cloudprov's group Deployments exists and Karpenter's NodePools do (``skctl env up
    --autoscaler karpenter`` sets the cluster up so; it makes the groups' namespace too, for
    the run's ConfigMap, so the namespace alone says nothing)."""
    for group in config.groups.values():
        if await kube.exists(DEPLOYMENTS.path(namespace=config.namespace, name=group.id)):
            return False
    try:
        pools = await kube.request("GET", NODE_POOLS.path())
    except ApiError as exc:
        if exc.code == 404:  # no Karpenter CRDs
            return False
        raise
    return bool(pools.get("items"))


async def _reset_karpenter(kube: KubeClient, config: cloud_config.CloudConfig, *,
                           timeout: float) -> None:
    """Karpenter keeps no minimum: every NodeClaim goes (Karpenter drains and deletes its
    Node), so each run starts, as the first did, from no Karpenter node at all."""
    for claim in (await kube.request("GET", NODE_CLAIMS.path())).get("items") or []:
        try:
            await kube.request("DELETE", NODE_CLAIMS.path(name=claim["metadata"]["name"]))
        except ApiError as exc:
            if exc.code != 404:
                raise NodeGroupError(f"cannot delete NodeClaim "
                                     f"{claim['metadata']['name']}: {exc}") from None

    async def gone() -> bool:
        if (await kube.request("GET", NODE_CLAIMS.path())).get("items"):
            return False
        counts = await asyncio.gather(*(count_nodes(kube, g) for g in config.groups))
        return not any(counts)
    if not await poll(gone, timeout=timeout, interval=0.5):
        raise NodeGroupError(f"Karpenter's NodeClaims and nodes were not gone after "
                             f"{timeout:.0f}s (is Karpenter running?)")
    log.info("Karpenter's nodes removed before the run", groups=list(config.groups))
