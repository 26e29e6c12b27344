"""Keeps exactly one KWOK Node per placeholder pod, and every group's Deployment in place.

The ReplicaSet controller turns a group's replicas into placeholder pods; this reconciler
turns pods into Nodes. It works from the index: each change marks an instance (or a group's
Deployment) dirty, and a pass looks at the dirty ones only, so a 5,000-node group costs
nothing while it is still. A full pass every ``resync`` seconds retries whatever failed.

A pod that is live and has no Node gets one (named like the pod, with the next free pod
CIDR) once its group's provisioning delay has passed (provisioning.py: a timer marks it
dirty again when it is due). The Node registers NotReady, and
once the group's readyAfter has passed too, this reconciler tells KWOK to make it Ready.
Both delays count on the run's clock (current_run.py), readiness from when the Node was
due: while a replay is held they pass at the held speed (real time), not the run's. The
Node does not come when the group's capacity is used up: the instance fails as a stockout.
A Node whose pod is gone or terminating is deleted at the trace instant CA's scale-down
timers meant: CA counts them on the wall clock at the run's pace, holds included, so it asks
early by the holds' slip since it found the node unneeded (the run publishes those timers;
``_removal_waits``). A pod
carrying the lowest pod-deletion-cost is on its way out (DeleteNodes or DecreaseTargetSize
chose it), so it gets no Node, but its Node is left for the scaler to delete: if that
scale-down fails and the mark is withdrawn, the Node must still be there.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Coroutine
from datetime import timedelta
from typing import Any

from simkube.cloudprov.config import CloudConfig
from simkube.cloudprov.current_run import CurrentRun
from simkube.cloudprov.index import ClusterIndex, GroupState, NodeEntry, PodEntry
from simkube.cloudprov.manifests import fake_node, placeholder_deployment
from simkube.cloudprov.naming import OWNER_LABEL, READY_AFTER_ANNOTATION, READY_NOW
from simkube.cloudprov.options import Option
from simkube.core.kubeapi import DEPLOYMENTS, NODES, ApiError, KubeClient, delete, merge_patch
from simkube.core.logs import get_logger

log = get_logger(__name__)

CIDR_SLOTS = 32768  # /24s in 10.128.0.0/9
YIELD_EVERY = 500


def cidr_for_slot(slot: int) -> str:
    return f"10.{128 + slot // 256}.{slot % 256}.0/24"


class Reconciler:
    def __init__(self, *, api: KubeClient, index: ClusterIndex, config: CloudConfig,
                 current: CurrentRun | None = None,
                 resync: float = 30.0, retry: float = 2.0) -> None:
        self._api = api
        self._index = index
        self._config = config
        self._current = current or CurrentRun()
        self._resync = resync
        self._retry = retry
        self._dirty: set[tuple[str, str]] = set()
        self._wake = asyncio.Event()
        self._busy: set[tuple[str, str]] = set()  # requests in flight, by (group, name)
        self._deferred: set[tuple[str, str]] = set()  # checks skipped while busy
        self._reserved: dict[str, str] = {}  # Node name -> pod CIDR, until the index has it
        self._reserved_cidrs: set[str] = set()
        self._cursor = 0
        self._creating: set[tuple[str, str]] = set()  # Node creations in flight
        self._timers: dict[tuple[str, str], asyncio.TimerHandle] = {}  # instances not yet due
        self._held: set[tuple[str, str]] = set()  # instances due once the run's hold ends
        self._removing: dict[tuple[str, str], float] = {}  # Unix time a Node's pod went
        self._tasks: set[asyncio.Task[None]] = set()
        index.listeners.append(self.mark)
        self._current.listeners.append(self._holds_changed)

    def mark(self, group: str, name: str) -> None:
        self._dirty.add((group, name))
        self._wake.set()

    def _holds_changed(self) -> None:
        held, self._held = self._held, set()
        for key in held:
            self.mark(*key)

    def mark_all(self) -> None:
        for group, state in self._index.groups.items():
            self._dirty.add((group, ""))
            self._dirty.update((group, name) for name in (*state.pods, *state.nodes))
        self._wake.set()

    async def run(self) -> None:
        try:
            self.mark_all()
            while True:
                try:
                    async with asyncio.timeout(self._resync):  # not wait_for: see index.py
                        await self._wake.wait()
                except TimeoutError:
                    self.mark_all()
                self._wake.clear()
                dirty, self._dirty = self._dirty, set()
                # Oldest requests first: which instance a stockout fails must not be chance.
                for count, (group, name) in enumerate(sorted(dirty, key=self._age), start=1):
                    self._check(group, name)
                    if count % YIELD_EVERY == 0:
                        await asyncio.sleep(0)  # a full pass over 10,000 must not stall RPCs
        finally:
            for timer in self._timers.values():
                timer.cancel()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def _age(self, key: tuple[str, str]) -> tuple[float, str, str]:
        pod = self._index.groups[key[0]].pods.get(key[1])
        return (pod.created if pod else 0.0, *key)

    def _check(self, group: str, name: str) -> None:
        state = self._index.groups[group]
        if (group, name) in self._busy:
            self._deferred.add((group, name))  # looked at again once the call is answered
            return
        if not name:
            if state.replicas is None:
                self._spawn(group, name, self._create_deployment(group))
            return
        pod = state.pods.get(name)
        node = state.nodes.get(name)
        if node is None:
            self._removing.pop((group, name), None)
        else:
            self._release(name)
            self._creating.discard((group, name))  # counted in the index from now on
            if node.ready_held and not node.terminating:
                self._ready(group, name, created=node.created)
        if pod is not None and pod.live and node is None:
            self._provision(group, state, pod)
        elif (node is not None and not node.terminating and (pod is None or pod.terminating)
              and not self._removal_waits(group, node)):
            self._spawn(group, name, self._delete_node(name))

    def _provision(self, group: str, state: GroupState, pod: PodEntry) -> None:
        if pod.name in state.failed:
            return  # a stockout stays failed until Cluster Autoscaler deletes the instance
        spec = self._config.groups[group]
        # One count per instance: a Node the index has already seen may still be in
        # _creating until its own check runs, and counting it twice made a baseline
        # instance wait a provisioning delay (a minute after `env up`).
        nodes = len({n.name for n in state.nodes.values() if not n.terminating}
                    | {name for g, name in self._creating if g == group})
        baseline = nodes < spec.min_size  # the group's minimum is there from the start
        if not baseline and self._waits(
                group, pod.name, since=pod.created,
                wall=self._current.to_wall(self._creation_delay(group, pod.name))):
            return
        if not spec.provisioning.allows(nodes):
            log.info("node group out of capacity; the instance fails", group=group,
                     instance=pod.name, capacity=spec.provisioning.capacity)
            self._index.fail(group, pod.name)
            return
        self._creating.add((group, pod.name))
        held = not baseline and spec.provisioning.ready_after > 0
        self._spawn(group, pod.name, self._create_node(group, pod.name, ready_held=held))

    def _creation_delay(self, group: str, name: str) -> float:
        """Trace seconds from ``name``'s request to its Node: the group's delay (this
        instance's jitter draw)."""
        share = self._current.share(group=group, instance=name)
        return self._config.groups[group].provisioning.delay_for(share)

    def _removal_waits(self, group: str, node: NodeEntry) -> bool:
        """Whether a Node whose pod has gone must stay a while. CA asks to delete a node once
        its scale-down-unneeded-time and then its node-delete-delay-after-taint have passed on
        its wall clock, which ran on at the run's pace through the holds, where trace time
        moved at the held speed: in trace time it asks early by the holds' slip since it found
        the node unneeded (a second of hold is 19 s of trace at speed 20). The Node goes at
        the trace instant those timers meant, counted from then. CA asks later than its timers
        when its next loop comes after them, or another timer held it back; that lateness it
        owes to nothing the holds did, so it is not slipped again: the wait is the timers'
        length, or what CA took if less (a run that does not publish its timers). Not
        Ready-changing, not schedulable (CA's ToBeDeleted taint), it only keeps counting as a
        node."""
        decided = self._removing.setdefault((group, node.name), time.time())
        since = node.candidate_since
        if since is None or since >= decided:
            return False
        wall = min(decided - since, self._removal_timers_wall(group))
        return self._waits(group, node.name, since=since, wall=wall)

    def _removal_timers_wall(self, group: str) -> float:
        """Wall seconds at the run's pace of CA's unneeded time (the group's own option if it
        sets one) and its delay after tainting; infinite when the run does not say."""
        timing = self._current.timing
        option = self._config.groups[group].overrides.values.get(
            Option.SCALE_DOWN_UNNEEDED_DURATION)
        unneeded = (option.total_seconds() if isinstance(option, timedelta)
                    else timing.scale_down_unneeded_s)
        if unneeded is None or timing.delete_delay_after_taint_s is None:
            return math.inf
        return self._current.to_wall(unneeded + timing.delete_delay_after_taint_s)

    def _waits(self, group: str, name: str, *, since: float, wall: float) -> bool:
        """Whether ``wall`` seconds of the run's clock (wall seconds at the run's pace) since
        Unix time ``since`` are still to pass; if so, the instance is marked again when they
        may have."""
        now = time.time()
        due = self._current.due_at(since=since, wall=wall, now=now)
        if due <= now:
            return False
        if self._current.holding:
            # The hold's end (a ConfigMap change) marks it again: its due time comes forward.
            self._held.add((group, name))
        self._wake_later(group, name, due - now)
        return True

    def _ready(self, group: str, name: str, *, created: float) -> None:
        """Tell KWOK to make the Node Ready once its group's readyAfter has passed since the
        Node was due. Counting from the request rather than from when the Node appeared
        keeps the create call's wall latency (and a retry's) out of the trace: at speed 20,
        50 ms of it is a second. A Node with no placeholder pod left counts from its
        appearance."""
        since, delay = created, self._config.groups[group].provisioning.ready_after
        pod = self._index.groups[group].pods.get(name)
        if pod is not None:
            since, delay = pod.created, delay + self._creation_delay(group, name)
        if not self._waits(group, name, since=since, wall=self._current.to_wall(delay)):
            self._spawn(group, name, self._mark_ready(name))

    def _wake_later(self, group: str, name: str, seconds: float) -> None:
        key = (group, name)
        loop = asyncio.get_running_loop()
        timer = self._timers.get(key)
        if timer is not None:
            if timer.when() <= loop.time() + seconds:
                return  # it wakes soon enough, and looks again then
            timer.cancel()  # a hold's expiry timer, and the hold has ended sooner

        def due() -> None:
            self._timers.pop(key, None)
            self.mark(group, name)
        self._timers[key] = loop.call_later(seconds, due)

    def _spawn(self, group: str, name: str, work: Coroutine[Any, Any, None]) -> None:
        key = (group, name)
        self._busy.add(key)

        async def guarded() -> None:
            try:
                await work
            except ApiError as exc:
                log.warning("reconcile failed; retrying", group=group, instance=name,
                            error=str(exc))
                self._release(name)
                await asyncio.sleep(self._retry)
                self.mark(group, name)
                self._creating.discard(key)
            finally:
                self._busy.discard(key)
                if key in self._deferred:  # the watch showed a change while we waited
                    self._deferred.discard(key)
                    self.mark(group, name)
        task = asyncio.create_task(guarded())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _next_cidr(self, name: str) -> str | None:
        taken = self._index.cidrs
        for step in range(CIDR_SLOTS):
            cidr = cidr_for_slot((self._cursor + step) % CIDR_SLOTS)
            if cidr not in taken and cidr not in self._reserved_cidrs:
                self._cursor = (self._cursor + step + 1) % CIDR_SLOTS
                self._reserved[name] = cidr
                self._reserved_cidrs.add(cidr)
                return cidr
        return None  # more Nodes than /24s: they work without a pod CIDR

    def _release(self, name: str) -> None:
        cidr = self._reserved.pop(name, None)
        if cidr:
            self._reserved_cidrs.discard(cidr)

    async def _create_node(self, group: str, name: str, *, ready_held: bool) -> None:
        cidr = self._reserved.get(name) or self._next_cidr(name)
        body = fake_node(self._config.groups[group], namespace=self._config.namespace,
                         name=name, pod_cidr=cidr, registering=True, ready_held=ready_held)
        try:
            await self._api.request("POST", NODES.path(), body=body)
        except ApiError as exc:
            if exc.code != 409:
                raise
            existing = await self._api.request("GET", NODES.path(name=name))
            labels = (existing.get("metadata") or {}).get("labels") or {}
            if labels.get(OWNER_LABEL) != self._config.namespace:
                log.warning("a Node named like the placeholder pod exists and is not ours; "
                            "the instance stays creating", group=group, node=name)
                self._creating.discard((group, name))
            return
        log.debug("node created", group=group, node=name, pod_cidr=cidr)

    async def _mark_ready(self, name: str) -> None:
        path = NODES.path(name=name)
        try:
            await merge_patch(self._api, path,
                              {"metadata": {"annotations": {READY_AFTER_ANNOTATION: READY_NOW}}})
        except ApiError as exc:
            if exc.code != 404:  # gone meanwhile: nothing to make Ready
                raise
            return
        log.debug("node ready to turn Ready", node=name)

    async def _delete_node(self, name: str) -> None:
        if await delete(self._api, NODES.path(name=name)):
            log.debug("node deleted", node=name)

    async def _create_deployment(self, group: str) -> None:
        spec = self._config.groups[group]
        body = placeholder_deployment(spec, namespace=self._config.namespace,
                                      infra=self._config.infra_node, replicas=spec.min_size)
        try:
            await self._api.request(
                "POST", DEPLOYMENTS.path(namespace=self._config.namespace),
                body=body)
        except ApiError as exc:
            if exc.code != 409:
                raise
            return
        log.info("group deployment created", group=group, replicas=spec.min_size)
