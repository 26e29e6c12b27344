"""Which pods a replayed scale-down removes: the ones the recording says went.

When a Deployment's replicas drop, its ReplicaSet picks the pods to delete: not-ready
before ready, then the lowest ``controller.kubernetes.io/pod-deletion-cost``, then pods
doubled up on a node, then the most recently Ready by logarithmic time bucket, and between
pods still tied, by UID (``ActivePodsWithRanks`` in kube-controller-manager). In a replay
that choice is drawn again, and it goes wrong in two ways:
- UIDs are random, so two replays of one trace empty different nodes, and the pods that
  come next fit or do not fit differently (docs/fidelity.md, *Why pods land differently*);
- the ready-time buckets are wall time with one-second timestamps: at 20x every pod that
  turned Ready within 20 s of trace is tied, so the rule that prefers the newest pods
  mostly stops working as the speed grows.

A trace that tracks a Deployment's lifecycle records which of its pods went when
(``PodRun``). sk-tracer records a run when the pod starts (``status.startTime``) and orders
runs by start, and a pod deleted before it started has no run. The driver numbers the
replay's pods the same way, as each starts (``podtimer.py``), so the n-th pod to start in the
replay is the n-th recorded run; before it applies a lower replica count, it gives the pods
whose recorded runs ended then a low deletion cost, so the ReplicaSet takes those.

Pods started in the same second share a start stamp, so the order cannot tell them apart.
What can is the kind of node each ran on: sk-tracer records the instance type of the node
a run started on (``PodRun.node_type``), and the driver looks up the type of the node each
replay pod started on. If the recording removed some but not all pods of such a group, the
pods on the instance types the recording removed from are taken: certainly when that type
holds no more of the group's pods than the recording removed from it, and by the
ReplicaSet's own rules (co-location first) among the pods of that type otherwise; the rest
of the group is offered only when those types run short, and the whole group gets the
milder cost when runs carry no type (older traces). This keeps the pods that stayed on the
kind of node they stayed on: at the benchmark's defaults the recording drained its large
node because its long-lived pods were on small ones (fidelity run 14).

Whichever pod of a group goes takes the run that ended first among its group, preferring
runs of its own node's type, and the one left keeps the later run: numbering them for good
at start would leave the survivor holding a run that already ended, and the owner's next
scale-down would find no recorded victim alive and fall back to the ReplicaSet's choice
(fidelity run 13: a pod the recording removed at 380 s stayed to the end, so CA kept its
node). Marks from an owner's previous scale-down come off at its next one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import groupby

from simkube.driver.lifecycles import owner_key
from simkube.trace import PodLifecycle, PodRun

# Owners whose scale-downs the ReplicaSet controller resolves by deletion cost. A
# StatefulSet removes its highest ordinal, a DaemonSet follows its nodes: nothing to choose.
VICTIM_OWNER_KINDS = frozenset({"apps/v1.Deployment", "apps/v1.ReplicaSet"})
DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
# Below the default of 0, so marked pods go first; certain victims before a group's.
CERTAIN_COST = -2
GROUP_COST = -1
# A recorded run that ended this long after a scale-down was not its victim (the recorded
# cluster deletes within a second or two); one that ended up to END_SLACK_MS before the
# event was (the tracer may see the Deployment's change after the pod's deletion).
MATCH_WINDOW_MS = 15_000
END_SLACK_MS = 1_000

PodName = tuple[str, str]  # namespace, name


@dataclass(frozen=True, slots=True, kw_only=True)
class Marks:
    """The deletion costs to set before one scale-down, and the earlier marks to remove."""

    owner: str
    costs: dict[PodName, int] = field(default_factory=dict)
    cleared: tuple[PodName, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.costs or self.cleared)


@dataclass(slots=True)
class _Owner:
    runs: tuple[PodRun, ...]  # in start order, as sk-tracer exports them
    started: int = 0  # the replay's pods of this owner that have started
    live: dict[int, PodName] = field(default_factory=dict)  # start number -> pod
    marked: set[PodName] = field(default_factory=set)


class VictimPlan:
    """Recorded scale-down victims of each Deployment and ReplicaSet; one per simulation."""

    def __init__(self, lifecycles: Iterable[PodLifecycle], *, start_ms: int) -> None:
        self._start_ms = start_ms
        self._owners: dict[str, _Owner] = {}
        for lifecycle in lifecycles:
            if lifecycle.owner_kind in VICTIM_OWNER_KINDS and lifecycle.runs:
                key = owner_key(lifecycle.owner_kind, lifecycle.owner)
                known = self._owners.get(key)
                self._owners[key] = _Owner(runs=(known.runs if known else ()) + lifecycle.runs)
        self._numbers: dict[PodName, tuple[str, int]] = {}  # pod -> owner, start number
        self._types: dict[PodName, str | None] = {}  # pod -> its node's instance type

    @property
    def owners(self) -> frozenset[str]:
        return frozenset(self._owners)

    def knows(self, pod: PodName) -> bool:
        """Whether ``pod`` has been numbered (told ``started`` and not yet gone)."""
        return pod in self._numbers

    def started(self, owner: str, *, pod: PodName, node_type: str | None = None) -> None:
        """The replay's pod ``pod`` of ``owner`` has started on a node of instance type
        ``node_type``: it is the next recorded run."""
        if (entry := self._owners.get(owner)) is not None and pod not in self._numbers:
            entry.live[entry.started] = pod
            self._numbers[pod] = (owner, entry.started)
            self._types[pod] = node_type
            entry.started += 1

    def gone(self, pod: PodName) -> None:
        """``pod`` is being deleted or is gone: no longer a candidate.

        It ends the recorded run that ended first among the live pods started in its second,
        of its own node's type if one is (``_first_to_end``): pods the trace cannot tell
        apart go in the order their runs ended, whichever of them the ReplicaSet took, so
        the one left keeps the later run and the owner's next scale-down finds it."""
        if (found := self._numbers.get(pod)) is None:
            return
        owner, number = found
        entry = self._owners[owner]
        first = _first_to_end(entry, number, node_type=self._types.pop(pod, None))
        if first != number:  # trade numbers with the pod that was to go first
            other = entry.live[first]
            entry.live[number], self._numbers[other] = other, (owner, number)
        del self._numbers[pod]
        entry.live.pop(first, None)
        entry.marked.discard(pod)

    def retain(self, pods: set[PodName]) -> None:
        """Only ``pods`` exist (a fresh listing): forget the rest, whose deletion was missed."""
        for pod in [pod for pod in self._numbers if pod not in pods]:
            self.gone(pod)

    def scale_down(self, owner: str, *, offset_ms: int, removed: int) -> Marks:
        """The marks that make ``owner`` lose ``removed`` pods as the recording did, for a
        scale-down at ``offset_ms`` of trace time (since the trace's start)."""
        entry = self._owners.get(owner)
        if entry is None or removed <= 0:
            return Marks(owner=owner)
        at = self._start_ms + offset_ms
        victims = _recorded_victims(entry, at=at, removed=removed)
        costs: dict[PodName, int] = {}
        alive = sorted(number for number in entry.live
                       if number < len(entry.runs) and _alive(entry.runs[number], at))
        alive.sort(key=lambda number: entry.runs[number].start_ms)
        for _, members in groupby(alive, key=lambda number: entry.runs[number].start_ms):
            pods = {number: entry.live[number] for number in members}
            costs.update(self._group_costs(entry, pods, victims))
        cleared = tuple(sorted(entry.marked - costs.keys()))
        entry.marked = set(costs)
        return Marks(owner=owner, costs=costs, cleared=cleared)


    def _group_costs(self, entry: _Owner, pods: dict[int, PodName],
                     victims: set[int]) -> dict[PodName, int]:
        """The deletion costs within one same-second group (start number -> pod): all of it
        when the recording removed all of it; otherwise the pods on the instance types it
        removed from, and the rest only when those run short or runs have no type."""
        chosen = [number for number in pods if number in victims]
        if len(chosen) == len(pods):
            return dict.fromkeys(pods.values(), CERTAIN_COST)
        if not chosen:
            return {}
        wanted = Counter(entry.runs[number].node_type for number in chosen)
        if None in wanted:  # a run without a type: the ReplicaSet chooses in the group
            return dict.fromkeys(pods.values(), GROUP_COST)
        costs: dict[PodName, int] = {}
        covered = 0
        for node_type, count in wanted.items():
            on_type = [pod for pod in pods.values() if self._types.get(pod) == node_type]
            cost = CERTAIN_COST if len(on_type) <= count else GROUP_COST
            costs.update(dict.fromkeys(on_type, cost))
            covered += min(len(on_type), count)
        if covered < len(chosen):  # too few on those types: the rest of the group is offered
            costs.update({pod: GROUP_COST for pod in pods.values() if pod not in costs})
        return costs


def _first_to_end(entry: _Owner, number: int, *, node_type: str | None) -> int:
    """Of the live pods whose runs started in the same second as run ``number``'s, the
    number whose run ended first (a run still going ends last), preferring runs recorded on
    ``node_type``; ``number`` itself when it has no recorded run."""
    if number >= len(entry.runs):
        return number
    start = entry.runs[number].start_ms
    group = [other for other in entry.live
             if other < len(entry.runs) and entry.runs[other].start_ms == start]
    return min(group, key=lambda other: (entry.runs[other].node_type != node_type,
                                         _end_or_never(entry.runs[other]), other),
               default=number)


def _end_or_never(run: PodRun) -> float:
    return float("inf") if run.end_ms is None else run.end_ms


def _alive(run: PodRun, at: int) -> bool:
    return run.end_ms is None or run.end_ms >= at - END_SLACK_MS


def _recorded_victims(entry: _Owner, *, at: int, removed: int) -> set[int]:
    """Start numbers of the live pods whose recorded runs this scale-down ended: the
    ``removed`` that ended first within the match window."""
    ended = sorted((run.end_ms, number) for number in entry.live
                   if number < len(entry.runs)
                   and (run := entry.runs[number]).end_ms is not None
                   and at - END_SLACK_MS <= run.end_ms <= at + MATCH_WINDOW_MS)
    return {number for _, number in ended[:removed]}
