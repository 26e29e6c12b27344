"""Changing a group's size with Cluster Autoscaler's semantics, one change per group at a time.

* IncreaseSize raises the Deployment's replicas and returns when the index shows the new
  target, so CA's next TargetSize sees it.
* DeleteNodes removes exactly the chosen instances: their placeholder pods get the lowest
  ``controller.kubernetes.io/pod-deletion-cost``, replicas drop by their number in one
  test-and-set update, and the ReplicaSet controller removes the cheapest pods, i.e. those.
  Their Nodes are deleted at once, except during a replay that held its clock after CA
  found them unneeded: those stay for the time held (reconciling.py). Instances that never
  registered (no Node yet) are pods like any other. If the ReplicaSet keeps a chosen pod
  (it does when it still had pods to create), a follow-up deletes that pod itself; the
  target is already right.
* DecreaseTargetSize only cancels instances without a registered Node: replicas not yet
  backed by a pod go first, then pods whose Node does not exist yet (marked the same way).

Nothing is left half done: checks run before any change, a failed step withdraws the marks it
set, and the replicas update is a JSON patch that first tests the replicas it read, so a
concurrent edit aborts it instead of being overwritten.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from simkube.cloudprov.config import CloudConfig
from simkube.cloudprov.current_run import CurrentRun
from simkube.cloudprov.index import ClusterIndex, GroupState, NodeEntry
from simkube.cloudprov.removal import Removals, time_left
from simkube.core.errors import (
    AbortedError,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    OutOfRangeError,
    UnavailableError,
)
from simkube.core.kubeapi import DEPLOYMENTS, NODES, ApiError, KubeClient, delete, json_patch
from simkube.core.logs import get_logger

log = get_logger(__name__)


class Scaler:
    def __init__(self, *, api: KubeClient, index: ClusterIndex, config: CloudConfig,
                 settle: float = 60.0,
                 current: CurrentRun | None = None) -> None:
        self._api = api
        self._current = current or CurrentRun()
        self._index = index
        self._config = config
        self._locks = {group: asyncio.Lock() for group in config.groups}
        self._removals = Removals(api=api, index=index, config=config, settle=settle)

    def state(self, group: str) -> GroupState:
        state = self._index.groups[group]
        if state.replicas is None:
            raise UnavailableError(
                f"node group {group!r} has no Deployment {self._config.namespace}/{group} yet; "
                f"sk-cloudprov is creating it")
        return state

    async def increase(self, group: str, delta: int, *, deadline: float) -> None:
        if delta <= 0:
            raise InvalidArgumentError(
                f"delta must be positive to increase node group {group!r}, got {delta}")
        async with self._locks[group]:
            current = self.replicas(group)
            target = current + delta
            limit = self._config.groups[group].max_size
            if target > limit:
                raise OutOfRangeError(
                    f"increasing node group {group!r} by {delta} to {target} would exceed its "
                    f"maxSize {limit} (target size is {current})")
            await self._set_replicas(group, target, deadline=deadline)
        log.info("node group increased", group=group, delta=delta, target=target)

    def replicas(self, group: str) -> int:
        replicas = self.state(group).replicas
        assert replicas is not None  # noqa: S101  # state() checked it
        return replicas

    async def delete_nodes(self, group: str, names: Iterable[str], *, deadline: float) -> None:
        wanted = list(dict.fromkeys(names))
        if not wanted:
            raise InvalidArgumentError(f"the request for node group {group!r} names no nodes")
        async with self._locks[group]:
            state = self.state(group)
            for name in wanted:
                owner = self._index.group_of(name)
                if owner is None:
                    raise NotFoundError(f"node {name!r} is not an instance of node group {group!r}")
                if owner != group:
                    raise FailedPreconditionError(
                        f"node {name!r} belongs to node group {owner!r}, not {group!r}")
            chosen = [name for name in wanted if name in state.pods and state.pods[name].live]
            target = self.replicas(group) - len(chosen)
            limit = self._config.groups[group].min_size
            if target < limit:
                raise OutOfRangeError(
                    f"deleting {len(chosen)} node(s) would shrink node group {group!r} to "
                    f"{target}, below its minSize {limit}")
            if chosen:
                await self._shrink(group, chosen, target, deadline=deadline)
            doomed = [name for name in wanted
                      if name in state.nodes and not self._lingers(state.nodes[name])]
            try:
                await asyncio.gather(*(delete(self._api, NODES.path(name=n)) for n in doomed))
            except ApiError as exc:
                raise UnavailableError(
                    f"the target of node group {group!r} is now {target}, but deleting its Nodes "
                    f"failed ({exc}); they are deleted when their pods are gone") from None
        log.info("nodes deleted", group=group, nodes=wanted, target=target)

    def _lingers(self, node: NodeEntry) -> bool:
        """The run was held since CA found ``node`` unneeded: the reconciler deletes it once
        the holds' slip has passed too."""
        since = node.candidate_since
        return since is not None and self._current.slip_since(since) > 0

    async def decrease(self, group: str, delta: int, *, deadline: float) -> None:
        if delta >= 0:
            raise InvalidArgumentError(
                f"delta must be negative to decrease the target size of node group {group!r}, got "
                f"{delta}")
        async with self._locks[group]:
            state = self.state(group)
            current = self.replicas(group)
            target = current + delta
            registered = state.registered()
            if target < registered:
                raise FailedPreconditionError(
                    f"decreasing node group {group!r} by {-delta} to {target} would remove "
                    f"registered nodes: {registered} of its {current} instances are registered; "
                    f"use DeleteNodes to remove them")
            limit = self._config.groups[group].min_size
            if target < limit:
                raise OutOfRangeError(
                    f"decreasing node group {group!r} to {target} would go below its minSize "
                    f"{limit}")
            live = [name for name, pod in state.pods.items() if pod.live]
            from_pods = -delta - max(current - len(live), 0)
            unregistered = [name for name in live if name not in state.nodes]
            if len(unregistered) < from_pods:
                raise AbortedError(f"node group {group!r} changed while decreasing; retry")
            if from_pods > 0:
                await self._shrink(group, unregistered[:from_pods], target, deadline=deadline)
            else:
                await self._set_replicas(group, target, deadline=deadline)
        log.info("node group target decreased", group=group, delta=delta, target=target)

    async def _set_replicas(self, group: str, target: int, *, deadline: float) -> None:
        state = self.state(group)
        # Test-and-set on spec.replicas alone: the Deployment's resourceVersion changes with
        # every status update its controller makes, so it would make nearly every update
        # conflict; the replicas are what a concurrent edit would make us overwrite.
        body: list[dict[str, Any]] = [
            {"op": "test", "path": "/spec/replicas", "value": state.replicas},
            {"op": "replace", "path": "/spec/replicas", "value": target}]
        path = DEPLOYMENTS.path(namespace=self._config.namespace, name=group)
        try:
            await json_patch(self._api, path, body)
        except ApiError as exc:
            if exc.code in (409, 422):
                raise AbortedError(
                    f"the replicas of node group {group!r} changed meanwhile (they were "
                    f"{state.replicas}); nothing was changed, retry") from None
            raise UnavailableError(f"cannot update node group {group!r}: {exc}") from None
        if not await self._index.wait_until(lambda: state.replicas == target,
                                            timeout=time_left(deadline)):
            raise UnavailableError(
                f"the target of node group {group!r} was set to {target}, but the watch has not "
                f"shown it yet")

    async def _shrink(self, group: str, chosen: list[str], target: int, *,
                      deadline: float) -> None:
        await self._removals.remove(
            group, chosen, target=target, deadline=deadline,
            lower=lambda: self._set_replicas(group, target, deadline=deadline))

    async def recover(self) -> None:
        await self._removals.recover()

    async def close(self) -> None:
        await self._removals.close()
