"""What sk-cloudprov knows about its groups, in memory, kept current by watches.

Cluster Autoscaler calls NodeGroupForNode for every node in every loop and expects answers at
once, so no RPC lists anything: three watches (the groups' Deployments, their placeholder
pods, their Nodes) feed this index, and RPCs read it. All mutation happens on the event loop
in plain, non-awaiting methods, so a reader never sees half an update. Writers that changed
the cluster wait with ``wait_until`` until the index shows their change, which is how
IncreaseSize can promise that TargetSize reflects it when it returns.

An *instance* is a placeholder pod or a Node of a group (they share a name); its phase is
derived from both, as Cluster Autoscaler's instance states want it. A pod remembers when it
was created (when the watch first showed it, or its creationTimestamp when listed at start),
which is when its provisioning delay starts; a Node likewise, for its readiness delay.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from simkube.cloudprov.naming import (
    DELETION_CANDIDATE_TAINT_KEY,
    DELETION_COST_ANNOTATION,
    GROUP_LABEL,
    LOWEST_DELETION_COST,
    READY_AFTER_ANNOTATION,
    READY_HELD,
)
from simkube.core.kubeapi import unix_s

ENDED_PHASES = frozenset({"Failed", "Succeeded"})


class Phase(Enum):
    CREATING = "creating"
    RUNNING = "running"
    DELETING = "deleting"
    FAILED = "failed"  # the cloud could not supply it (a stockout): creating, with an error


class Kind(Enum):
    DEPLOYMENT = "Deployment"
    POD = "Pod"
    NODE = "Node"


@dataclass(slots=True, frozen=True)
class PodEntry:
    name: str
    terminating: bool
    marked: bool  # carries the lowest pod-deletion-cost: chosen for removal
    created: float = 0.0  # Unix time the instance was requested
    # What the ReplicaSet controller ranks before the cost when it picks pods to remove;
    # kept to say why it removed one nobody chose (removal.py), read for nothing else.
    phase: str = ""
    ready: bool = False

    @property
    def live(self) -> bool:
        return not self.terminating and not self.marked


@dataclass(slots=True, frozen=True)
class NodeEntry:
    name: str
    ready: bool
    terminating: bool
    pod_cidr: str
    created: float = 0.0  # Unix time the Node appeared: its readiness delay starts there
    ready_held: bool = False  # waits for sk-cloudprov to say it is ready (READY_HELD)
    # Unix time Cluster Autoscaler found it unneeded (its soft taint), or None.
    candidate_since: float | None = None


@dataclass(slots=True)
class GroupState:
    replicas: int | None = None  # None until the group's Deployment is seen
    pods: dict[str, PodEntry] = field(default_factory=dict)
    nodes: dict[str, NodeEntry] = field(default_factory=dict)
    failed: set[str] = field(default_factory=set)  # instances the cloud could not supply
    # Every instance's phase, updated as pods and Nodes change, so answers and gauges need
    # no pass over thousands of instances; ``generation`` moves when any phase does (a
    # Node's heartbeat changes nothing here).
    phases: dict[str, Phase] = field(default_factory=dict)
    counts: Counter[Phase] = field(default_factory=Counter)
    generation: int = 0

    def _phase(self, name: str) -> Phase | None:
        pod = self.pods.get(name)
        node = self.nodes.get(name)
        if pod is None and node is None:
            return None
        if pod is None or not pod.live or (node is not None and node.terminating):
            return Phase.DELETING
        if node is None and name in self.failed:
            return Phase.FAILED
        return Phase.RUNNING if node is not None and node.ready else Phase.CREATING

    def touch(self, name: str) -> None:
        new = self._phase(name)
        old = self.phases.get(name)
        if new is old:
            return
        if old is not None:
            self.counts[old] -= 1
        if new is None:
            del self.phases[name]
        else:
            self.counts[new] += 1
            self.phases[name] = new
        self.generation += 1

    def fail(self, name: str) -> None:
        self.failed.add(name)
        self.touch(name)

    def active(self) -> int:
        """Pods not on their way out: what the ReplicaSet controller counts against replicas."""
        return sum(1 for pod in self.pods.values() if not pod.terminating)

    def registered(self) -> int:
        """Nodes that exist and stay: what DecreaseTargetSize may never remove."""
        return sum(1 for name in self.nodes if self.phases.get(name) is not Phase.DELETING)


Listener = Callable[[str, str], None]
"""Told ``(group, instance name)`` after each change; the name is "" for the Deployment."""


class ClusterIndex:
    def __init__(self, *, groups: Iterable[str]) -> None:
        self.groups: dict[str, GroupState] = {g: GroupState() for g in groups}
        self.cidrs: dict[str, str] = {}  # pod CIDR -> Node name
        self.listeners: list[Listener] = []
        self._owner: dict[str, str] = {}  # instance name -> group
        self._changed = asyncio.Event()

    def group_of(self, name: str) -> str | None:
        return self._owner.get(name)

    async def wait_until(self, predicate: Callable[[], bool], *, timeout: float) -> bool:
        """Wait until ``predicate()`` holds after some change; False after ``timeout``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not predicate():
            remaining = deadline - loop.time()
            if remaining <= 0:
                return False
            try:
                # Not asyncio.wait_for: on Python 3.11 it can swallow a cancellation that
                # arrives as the event is set, and a stopping task would never stop.
                async with asyncio.timeout(remaining):
                    await self._changed.wait()
            except TimeoutError:
                return predicate()
        return True

    # Feeding, from the watches.

    def listed(self, kind: Kind, items: list[dict[str, Any]]) -> None:
        seen: set[tuple[str, str]] = set()
        for obj in items:
            key = self._apply(kind, obj, deleted=False)
            if key:
                seen.add(key)
        for group, state in self.groups.items():
            for name in _names(kind, state):
                if (group, name) not in seen:
                    self._remove(kind, group, name)

    def observed(self, kind: Kind, event: str, obj: dict[str, Any]) -> None:
        self._apply(kind, obj, deleted=event == "DELETED", fresh=event == "ADDED")

    def fail(self, group: str, name: str) -> None:
        """Mark an instance as one the cloud could not supply (see provisioning.py)."""
        self.groups[group].fail(name)
        self._notify(group, name)

    def _apply(self, kind: Kind, obj: dict[str, Any], *, deleted: bool,
               fresh: bool = False) -> tuple[str, str] | None:
        metadata = obj.get("metadata") or {}
        group = (metadata.get("labels") or {}).get(GROUP_LABEL)
        name = str(metadata.get("name") or "")
        if group not in self.groups or not name:
            return None
        key = (group, "" if kind is Kind.DEPLOYMENT else name)
        if kind is Kind.DEPLOYMENT and name != group:
            return None
        if deleted:
            self._remove(kind, *key)
            return key
        state = self.groups[group]
        gone = bool(metadata.get("deletionTimestamp"))
        if kind is Kind.DEPLOYMENT:
            replicas = (obj.get("spec") or {}).get("replicas")
            state.replicas = 1 if replicas is None else int(replicas)
        elif kind is Kind.POD:
            cost = (metadata.get("annotations") or {}).get(DELETION_COST_ANNOTATION)
            phase = (obj.get("status") or {}).get("phase")
            known = state.pods.get(name)
            # A pod the watch shows as it is added is timed from now (the timestamp has
            # whole seconds only); one listed at start, from its creationTimestamp.
            created = (known.created if known else
                       time.time() if fresh else _timestamp(metadata.get("creationTimestamp")))
            state.pods[name] = PodEntry(name=name, terminating=gone or phase in ENDED_PHASES,
                                        marked=cost == LOWEST_DELETION_COST, created=created,
                                        phase=str(phase or ""), ready=is_ready(obj))
            state.touch(name)
            self._owner[name] = group
        else:
            ready = is_ready(obj)
            cidr = str((obj.get("spec") or {}).get("podCIDR") or "")
            previous = state.nodes.get(name)
            if previous and previous.pod_cidr and previous.pod_cidr != cidr:
                self.cidrs.pop(previous.pod_cidr, None)
            held = ((metadata.get("annotations") or {}).get(READY_AFTER_ANNOTATION)
                    == READY_HELD)
            created = (previous.created if previous else
                       time.time() if fresh else _timestamp(metadata.get("creationTimestamp")))
            candidate = _candidate_since(obj, known=previous.candidate_since if previous
                                         else None)
            state.nodes[name] = NodeEntry(name=name, ready=ready, terminating=gone,
                                          pod_cidr=cidr, created=created,
                                          ready_held=held and not ready,
                                          candidate_since=candidate)
            if cidr:
                self.cidrs[cidr] = name
            state.touch(name)
            self._owner[name] = group
        self._notify(*key)
        return key

    def _remove(self, kind: Kind, group: str, name: str) -> None:
        state = self.groups[group]
        if kind is Kind.DEPLOYMENT:
            state.replicas = None
        else:
            removed = (state.pods if kind is Kind.POD else state.nodes).pop(name, None)
            if removed is None:
                return
            if kind is Kind.POD:
                state.failed.discard(name)
            if isinstance(removed, NodeEntry) and removed.pod_cidr:
                self.cidrs.pop(removed.pod_cidr, None)
            state.touch(name)
            if name not in state.pods and name not in state.nodes:
                self._owner.pop(name, None)
        self._notify(group, name)

    def _notify(self, group: str, name: str) -> None:
        self._changed.set()
        self._changed = asyncio.Event()
        for listener in self.listeners:
            listener(group, name)


def is_ready(obj: dict[str, Any]) -> bool:
    """A Node's or a pod's Ready condition is True."""
    conditions = (obj.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _timestamp(value: Any) -> float:
    """An RFC 3339 timestamp as Unix time; now if it is missing or malformed."""
    seconds = unix_s(value)
    return time.time() if seconds is None else seconds


def _candidate_since(node: dict[str, Any], *, known: float | None) -> float | None:
    """When CA found ``node`` unneeded, if its soft taint is on: ``known`` when it was on
    already, else now clamped into the taint's second (its value has whole seconds only; a
    watch shows the taint tens of milliseconds after it is put on, a list at start later)."""
    taints = (node.get("spec") or {}).get("taints") or []
    value = next((t.get("value") for t in taints
                  if t.get("key") == DELETION_CANDIDATE_TAINT_KEY), None)
    if value is None:
        return None
    if known is not None:
        return known
    try:
        second = float(int(str(value)))
    except ValueError:
        return None  # not CA's: nothing to go by
    return min(max(time.time(), second), second + 1.0)


def _names(kind: Kind, state: GroupState) -> list[str]:
    if kind is Kind.DEPLOYMENT:
        return [""] if state.replicas is not None else []
    return list(state.pods if kind is Kind.POD else state.nodes)
