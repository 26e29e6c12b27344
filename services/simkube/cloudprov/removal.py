"""Removing exactly the chosen placeholder pods through the ReplicaSet controller.

The ReplicaSet controller decides which pods go when replicas drop; it removes those with
the lowest ``controller.kubernetes.io/pod-deletion-cost`` first, ranking the pods from its
own informer cache. That cost is best effort upstream: when the controller's cache has not
caught up with the marks (it lags under load, and more so just after the controller-manager
restarts), it ranks unmarked pods and removes one nobody chose. That Node would go although
CA never asked (the autoscaler tier's kill test saw an original minimum Node go so).

So a removal marks the chosen pods with the lowest cost and, in the same patch, takes the
``IN_SERVICE_LABEL`` of the pod template off them. The ReplicaSet's
``status.fullyLabeledReplicas`` counts the pods with every template label, computed by that
controller from that cache; the removal waits until the ReplicaSet's status counts exactly
the pods our watch shows active and unmarked, then lowers replicas (the caller's
``lower``). The cost is only the fourth thing that controller ranks by, after being
unscheduled, the phase and readiness: an unmarked pod not yet Running and Ready (a new
instance's, or one the ReplicaSet just created in place of another) goes before every
marked one. So the removal also waits until every unmarked pod is Running and Ready in our
watch, and the status's ``readyReplicas`` agrees. Any failed step withdraws the marks, so
a failed scale-down leaves no pod marked for the next one. Marks nobody is acting on any
more (a crash between marking and lowering) are withdrawn before the next choice and at
start.

When the ReplicaSet still had pods to create it removes fewer than were chosen (it only
deletes pods beyond its replicas); a follow-up then deletes the chosen pods that stayed.
The target is already right, so the ReplicaSet's answer — a new pod — is what is wanted.
When the controller removed pods nobody chose instead, the follow-up says which, with the
phase, readiness and mark the watch last showed for each before replicas were lowered: the
controller ranks phase and readiness before the cost, so they tell why it chose as it did.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection, Mapping
from typing import Any

from simkube.cloudprov.config import CloudConfig
from simkube.cloudprov.index import ClusterIndex, PodEntry
from simkube.cloudprov.naming import (
    DELETION_COST_ANNOTATION,
    GROUP_LABEL,
    IN_SERVICE,
    IN_SERVICE_LABEL,
    LOWEST_DELETION_COST,
)
from simkube.core.errors import UnavailableError
from simkube.core.kubeapi import (
    PODS,
    REPLICA_SETS,
    ApiError,
    KubeClient,
    delete,
    merge_patch,
    poll,
)
from simkube.core.logs import get_logger

log = get_logger(__name__)
RUNNING = "Running"  # the pod phase the ReplicaSet controller ranks last


def time_left(deadline: float) -> float:
    """Seconds until ``deadline`` (event loop time), never quite zero."""
    return max(deadline - asyncio.get_running_loop().time(), 0.05)


class Removals:
    def __init__(self, *, api: KubeClient, index: ClusterIndex, config: CloudConfig,
                 settle: float) -> None:
        self._api = api
        self._index = index
        self._config = config
        self._settle = settle
        self._in_flight: dict[str, set[str]] = {group: set() for group in config.groups}
        self._tasks: set[asyncio.Task[None]] = set()

    async def remove(self, group: str, chosen: list[str], *, target: int,
                     lower: Callable[[], Awaitable[None]], deadline: float) -> None:
        """Mark ``chosen`` cheapest, ``lower`` replicas to ``target``; undo marks on failure."""
        state = self._index.groups[group]
        in_flight = self._in_flight[group]
        stale = [name for name, pod in state.pods.items() if pod.marked and not pod.terminating
                 and name not in in_flight and name not in chosen]
        try:
            await self._mark(group, stale, chosen=False)
            await self._mark(group, chosen, chosen=True)
            await self._until_marked(group, chosen, deadline=deadline)
            await lower()
        except BaseException:
            await asyncio.shield(self._withdraw(group, chosen))
            raise
        in_flight.update(chosen)
        # As the pods were when replicas dropped: the follow-up names any other that went.
        before = {name: pod for name, pod in state.pods.items()
                  if not pod.terminating and name not in chosen}
        task = asyncio.create_task(self._follow_up(group, chosen, target, before))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _until_marked(self, group: str, chosen: list[str], *, deadline: float) -> None:
        state = self._index.groups[group]
        if not await self._index.wait_until(
                lambda: all(name not in state.pods or not state.pods[name].live
                            for name in chosen), timeout=time_left(deadline)):
            raise UnavailableError(f"the watch did not show the pods of node group {group!r} "
                                   f"marked for removal; nothing was changed")
        why_not = ""

        async def ready() -> bool:
            nonlocal why_not
            why_not = await self._why_not_yet(group)
            return not why_not
        if not await poll(ready, timeout=time_left(deadline), interval=0.02):
            raise UnavailableError(f"{why_not}; nothing was changed")

    async def _why_not_yet(self, group: str) -> str:
        """Why lowering replicas now could remove a pod nobody chose; "" when it cannot.

        The controller ranks pods that are not Running, then not Ready, before the cost, so
        every unmarked pod must be Running and Ready; and its status must show that it sees
        the pods as our watch does: as many active ones, as many of those still carrying
        every template label (the marks), and as many Ready."""
        try:
            listing = await self._api.request(
                "GET", REPLICA_SETS.path(namespace=self._config.namespace),
                query={"labelSelector": f"{GROUP_LABEL}={group}"})
        except ApiError as exc:
            raise UnavailableError(f"cannot read the ReplicaSet of node group {group!r}: "
                                   f"{exc}") from None
        counted = labelled = ready = 0
        for replica_set in listing.get("items", []):
            status = replica_set.get("status") or {}
            counted += int(status.get("replicas") or 0)
            labelled += int(status.get("fullyLabeledReplicas") or 0)
            ready += int(status.get("readyReplicas") or 0)
        active = [pod for pod in self._index.groups[group].pods.values() if not pod.terminating]
        if counted != len(active) or labelled != sum(1 for pod in active if not pod.marked):
            return (f"the ReplicaSet controller has not yet counted the pods of node group "
                    f"{group!r} marked for removal (its cache lags)")
        starting = sorted(pod.name for pod in active
                          if not pod.marked and not (pod.ready and pod.phase == RUNNING))
        if starting:
            return (f"pod(s) {', '.join(starting)} of node group {group!r} are not yet Running "
                    f"and Ready, and the ReplicaSet controller would remove them before the "
                    f"chosen ones")
        if ready != sum(1 for pod in active if pod.ready):
            return (f"the ReplicaSet controller has not yet seen the pods of node group "
                    f"{group!r} Ready (its cache lags)")
        return ""

    async def recover(self) -> None:
        """After a restart: marks whose scale-down never happened are withdrawn."""
        for group, state in self._index.groups.items():
            marked = [n for n, pod in state.pods.items() if pod.marked and not pod.terminating]
            if marked and state.replicas is not None and state.active() <= state.replicas:
                log.info("withdrawing stale deletion-cost marks", group=group, pods=marked)
                await self._withdraw(group, marked)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _withdraw(self, group: str, names: list[str]) -> None:
        try:
            await self._mark(group, names, chosen=False)
        except UnavailableError as exc:
            log.warning("could not withdraw deletion-cost marks", group=group, pods=names,
                        error=str(exc))

    async def _mark(self, group: str, names: Collection[str], *, chosen: bool) -> None:
        """Chosen: the lowest cost, out of service; else neither (marks withdrawn)."""
        ns = self._config.namespace
        body = {"metadata": {
            "annotations": {DELETION_COST_ANNOTATION: LOWEST_DELETION_COST if chosen else None},
            "labels": {IN_SERVICE_LABEL: None if chosen else IN_SERVICE}}}
        try:
            await asyncio.gather(*(merge_patch(self._api, PODS.path(namespace=ns, name=name),
                                               body) for name in names))
        except ApiError as exc:
            if exc.code != 404:
                raise UnavailableError(f"cannot mark pods of node group {group!r}: {exc}") from None

    async def _follow_up(self, group: str, chosen: list[str], target: int,
                         before: dict[str, PodEntry]) -> None:
        state = self._index.groups[group]

        def kept() -> list[str]:
            return [n for n in chosen if n in state.pods and not state.pods[n].terminating]
        try:
            await self._index.wait_until(lambda: not kept() or state.active() <= target,
                                         timeout=self._settle)
            leftovers = kept()
            if leftovers:
                log.info("the ReplicaSet kept pods chosen for removal; deleting them",
                         group=group, pods=leftovers,
                         removed_instead=removed_instead(before, state.pods))
                ns = self._config.namespace
                await asyncio.gather(*(delete(self._api, PODS.path(namespace=ns, name=name))
                                       for name in leftovers))
        except ApiError as exc:
            log.warning("follow-up of a scale-down failed", group=group, error=str(exc))
        finally:
            self._in_flight[group].difference_update(chosen)


def removed_instead(before: Mapping[str, PodEntry],
                    now: Mapping[str, PodEntry]) -> list[dict[str, Any]]:
    """The pods of ``before`` (active, not chosen) that are gone or going now, each as the
    watch showed it before: what the ReplicaSet controller removed in place of the chosen."""
    return [{"pod": name, "phase": pod.phase, "ready": pod.ready, "marked": pod.marked}
            for name, pod in sorted(before.items())
            if name not in now or now[name].terminating]
