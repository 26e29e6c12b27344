"""Node groups before a run: read sk-cloudprov's config, reset each group to its minimum.

Repetitions are only comparable when each starts from the same cluster, and a previous run
leaves the autoscaler's groups wherever it scaled them. sk-cloudprov backs each group with a
Deployment of placeholder pods (one per Node), so setting the Deployment's replicas to the
group's minSize and waiting until the group's Nodes number exactly that puts every run on
the same footing. The same config gives the recorder each group's price.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from simkube.cloudprov import config as cloud_config
from simkube.cloudprov.naming import GROUP_LABEL
from simkube.core.errors import SimkubeError
from simkube.core.kubeapi import MERGE_PATCH, ApiError, KubeClient, poll
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
            found = await kube.request("GET", f"/api/v1/namespaces/{namespace}/configmaps/{name}")
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
    listing = await kube.request("GET", "/api/v1/nodes",
                                 query={"labelSelector": f"{GROUP_LABEL}={group}"})
    return sum(1 for node in listing.get("items", [])
               if not node.get("metadata", {}).get("deletionTimestamp"))


async def reset(kube: KubeClient, config: cloud_config.CloudConfig, *,
                timeout: float = RESET_TIMEOUT) -> None:
    """Every group at its minSize, Nodes included; ``NodeGroupError`` when one is not."""
    for group in config.groups.values():
        path = f"/apis/apps/v1/namespaces/{config.namespace}/deployments/{group.id}"
        try:
            await kube.request("PATCH", path, body={"spec": {"replicas": group.min_size}},
                               content_type=MERGE_PATCH)
        except ApiError as exc:
            hint = " (is sk-cloudprov running with this config?)" if exc.code == 404 else ""
            raise NodeGroupError(f"cannot reset node group {group.id!r}: {exc}{hint}") from None
    for group in config.groups.values():
        wanted = group.min_size

        async def settled(group_id: str = group.id, wanted: int = wanted) -> bool:
            return await count_nodes(kube, group_id) == wanted
        if not await poll(settled, timeout=timeout, interval=0.5):
            have = await count_nodes(kube, group.id)
            raise NodeGroupError(f"node group {group.id!r} has {have} Nodes, not its minSize "
                                 f"{wanted}, after {timeout:.0f}s")
        log.info("node group reset", group=group.id, nodes=wanted)
