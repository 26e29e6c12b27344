"""Instances that keep booting while Karpenter restarts, as a cloud's would.

Karpenter's KWOK provider "boots" an instance by sleeping for the node class's
``nodeRegistrationDelay`` in a goroutine and then creating the Node. A Karpenter that stops
(``skctl env restart``, or a run restarting it with new timers) loses those goroutines: the
NodeClaims stay launched without a Node until Karpenter's 15-minute registration timeout,
and their pods stay pending that long. A real cloud keeps booting instances whatever happens
to the controller that asked for them, so after Karpenter restarts the environment finishes
the job: every launched NodeClaim whose Node is missing gets it once the registration delay
has passed since the launch, built as the provider builds it (the NodeClaim's labels, which
the launch filled in from the provider's Node, KWOK's annotation, the unregistered taint
that Karpenter lifts when it registers the Node, the capacity and allocatable it launched).
At a speed the build holds a new Node's readiness and lifts it on the pace from a goroutine
that dies with it too: such Nodes get their NodePool's ready-after, for KWOK to count.
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from simkube.cloudprov.naming import READY_AFTER_ANNOTATION, READY_HELD, READY_NOW
from simkube.core.durations import parse_duration
from simkube.core.kubeapi import (
    KWOK_NODE_CLASSES,
    MERGE_PATCH,
    NODE_CLAIMS,
    NODE_POOLS,
    NODES,
    ApiError,
    KubeClient,
)
from simkube.core.logs import get_logger
from simkube.env.autoscalers.karpenter_claim_times import bring_back_claim_times
from simkube.env.controlplane.components import FAKE_NODE_ANNOTATION, FAKE_NODE_VALUE

log = get_logger(__name__)
PROVIDER_PREFIX = "kwok://"
UNREGISTERED_TAINT = {"key": "karpenter.sh/unregistered", "effect": "NoExecute"}
NODE_POOL_LABEL = "karpenter.sh/nodepool"


def _launched_at(claim: dict[str, Any]) -> float | None:
    for condition in (claim.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Launched" and condition.get("status") == "True":
            try:
                return datetime.fromisoformat(
                    str(condition.get("lastTransitionTime")).replace("Z", "+00:00")).timestamp()
            except ValueError:
                return None
    return None


def node_for(claim: dict[str, Any], *, ready_after: str | None = None) -> dict[str, Any]:
    """The Node the provider would have created for a launched ``claim``. Its readiness is
    the claim's, unless the claim carries the build's held value (its Nodes are made Ready
    on the pace by the build that launched it, which is gone): then ``ready_after``, its
    NodePool's, so KWOK makes it Ready by itself."""
    status = claim.get("status") or {}
    metadata = claim.get("metadata") or {}
    name = str(status["providerID"]).removeprefix(PROVIDER_PREFIX)
    annotations = {**(metadata.get("annotations") or {}), FAKE_NODE_ANNOTATION: FAKE_NODE_VALUE}
    if annotations.get(READY_AFTER_ANNOTATION) == READY_HELD:
        annotations[READY_AFTER_ANNOTATION] = ready_after or READY_NOW
    requests = ((claim.get("spec") or {}).get("resources") or {}).get("requests") or {}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": dict(metadata.get("labels") or {}),
                         "annotations": annotations},
            "spec": {"providerID": status["providerID"], "taints": [dict(UNREGISTERED_TAINT)]},
            "status": {"capacity": dict(requests),
                       "allocatable": {**requests, **(status.get("allocatable") or {})},
                       "phase": "Pending"}}


async def _delays(kube: KubeClient) -> dict[str, float]:
    classes = await kube.request("GET", KWOK_NODE_CLASSES.path())
    return {str(c["metadata"]["name"]): parse_duration(
                (c.get("spec") or {}).get("nodeRegistrationDelay") or "0s",
                field="nodeRegistrationDelay", allow_zero=True) / 1000
            for c in classes.get("items") or []}


async def _pool_readiness(kube: KubeClient) -> dict[str, str]:
    """Each NodePool's ready-after (its template's annotation), by name."""
    pools = await kube.request("GET", NODE_POOLS.path())
    return {str(p["metadata"]["name"]): str(
                (((p.get("spec") or {}).get("template") or {}).get("metadata") or {})
                .get("annotations", {}).get(READY_AFTER_ANNOTATION) or READY_NOW)
            for p in pools.get("items") or []}


async def _still_launched(kube: KubeClient, listed: dict[str, Any]) -> bool:
    """Whether the NodeClaim is still there and not being deleted, read again now: the list
    can be many seconds old by the time a claim's turn comes (an earlier claim's wait), and a
    Node made for a claim Karpenter has since deleted has no claim to remove it, so it stays
    and blocks every later reset (the Karpenter fidelity run of 2026-11-29)."""
    try:
        claim = await kube.request("GET", NODE_CLAIMS.path(name=listed["metadata"]["name"]))
    except ApiError as exc:
        if exc.code == 404:
            return False
        raise
    metadata = claim.get("metadata") or {}
    return (not metadata.get("deletionTimestamp")
            and metadata.get("uid") == (listed.get("metadata") or {}).get("uid"))


async def _recover(kube: KubeClient, *, grace_s: float) -> list[str]:
    delays = await _delays(kube)
    readiness = await _pool_readiness(kube)
    created: list[str] = []
    for claim in (await kube.request("GET", NODE_CLAIMS.path())).get("items") or []:
        launched = _launched_at(claim)
        provider = str((claim.get("status") or {}).get("providerID") or "")
        if (launched is None or not provider.startswith(PROVIDER_PREFIX)
                or (claim.get("metadata") or {}).get("deletionTimestamp")):
            continue
        pool = str(((claim.get("metadata") or {}).get("labels") or {}).get(NODE_POOL_LABEL))
        node = node_for(claim, ready_after=readiness.get(pool))
        if await kube.exists(NODES.path(name=node["metadata"]["name"])):
            continue
        delay = delays.get(str(((claim.get("spec") or {}).get("nodeClassRef") or {})
                               .get("name")), 0.0)
        # The provider's goroutine might still be alive (a graceful restart races it): wait
        # past its due time, then look again.
        await asyncio.sleep(max(0.0, launched + delay + grace_s - time.time()))
        if (await kube.exists(NODES.path(name=node["metadata"]["name"]))
                or not await _still_launched(kube, claim)):
            continue
        try:
            await kube.request("POST", NODES.path(), body=node)
        except ApiError as exc:
            if exc.code != 409:
                raise
            continue
        created.append(node["metadata"]["name"])
        log.info("created the node of an instance Karpenter launched before it restarted",
                 node=node["metadata"]["name"], nodeclaim=claim["metadata"]["name"])
    return created


async def _lift_orphans(kube: KubeClient, readiness: dict[str, str]) -> list[str]:
    """Nodes whose readiness the Karpenter build held and would have lifted on the pace:
    the goroutine that would have died with it, so they get their NodePool's ready-after
    (KWOK counts it from now); the names lifted."""
    lifted: list[str] = []
    for node in (await kube.request("GET", NODES.path())).get("items") or []:
        metadata = node.get("metadata") or {}
        if ((metadata.get("annotations") or {}).get(READY_AFTER_ANNOTATION) != READY_HELD
                or not str((node.get("spec") or {}).get("providerID") or "")
                .startswith(PROVIDER_PREFIX)):
            continue
        pool = str((metadata.get("labels") or {}).get(NODE_POOL_LABEL))
        try:
            await kube.request("PATCH", NODES.path(name=metadata["name"]),
                               body={"metadata": {"annotations": {
                                   READY_AFTER_ANNOTATION: readiness.get(pool, READY_NOW)}}},
                               content_type=MERGE_PATCH)
        except ApiError as exc:
            if exc.code != 404:
                raise
            continue
        lifted.append(str(metadata["name"]))
        log.info("node readiness lifted after Karpenter restarted", node=metadata["name"])
    return lifted


async def _run(kubeconfig: Path, grace_s: float) -> list[str]:
    kube = await KubeClient.connect(kubeconfig=kubeconfig)
    try:
        await bring_back_claim_times(kube)
        await _lift_orphans(kube, await _pool_readiness(kube))
        return await _recover(kube, grace_s=grace_s)
    finally:
        await kube.close()


def recover_instances(*, kubeconfig: Path, grace_s: float = 2.0) -> list[str]:
    """Create the Nodes of launched NodeClaims that have none; the names created. Before
    that, claims a paced build dated ahead are dated now (karpenter_claim_times.py) and
    Nodes whose held readiness that build would have lifted get their pool's."""
    return asyncio.run(_run(kubeconfig, grace_s))
