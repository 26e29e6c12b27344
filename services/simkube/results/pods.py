"""Per-pod times (created, scheduled, finished) and live counts by phase.

A pod's time to schedule is the trace time it was first seen bound to a node (``spec.nodeName``
or ``PodScheduled=True``) minus the trace time it was first seen. Watch events give both to
the precision of the recorder's clock. Pods first met in a *list* (present before the recorder
started or restarted, or created while a watch was down) have no such observations, so their
times come from the object: ``creationTimestamp`` and the ``PodScheduled`` condition's
``lastTransitionTime``, converted to trace time at ``speed``. Those timestamps have 1 s
resolution, so such a pod's pending time is uncertain by up to 1 wall second times speed.
Only small per-pod state is kept: a few floats and strings, never the object.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from simkube.core.durations import DurationError, parse_duration
from simkube.core.simtime import TimeScale
from simkube.driver.names import STARTUP_DELAY, STARTUP_DELAY_MAX
from simkube.results.model import PodRow

TERMINAL = ("Succeeded", "Failed")
PHASES = ("Pending", "Running", "Succeeded", "Failed")


@dataclass(slots=True)
class PodState:
    namespace: str
    name: str
    node: str | None = None
    group: str | None = None
    created: float | None = None
    scheduled: float | None = None
    finished: float | None = None
    phase: str = "Pending"
    live: bool = True
    started: bool = False     # seen Running (or ended) at least once
    allowance_s: float = 0.0  # wall seconds KWOK is told to wait before starting it
    unstarted: bool = False   # flagged by ``overdue``: bound and not started in time

    def row(self) -> PodRow:
        pending = (None if self.created is None or self.scheduled is None
                   else max(self.scheduled - self.created, 0.0))
        return PodRow(namespace=self.namespace, name=self.name, group=self.group,
                      node=self.node, created_trace_s=self.created,
                      scheduled_trace_s=self.scheduled, pending_s=pending,
                      finished_trace_s=self.finished, phase=self.phase,
                      bound_unstarted=self.unstarted)


def parse_time(text: object) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def _startup_allowance(annotations: Mapping[str, Any]) -> float:
    """Wall seconds the pod-running stage waits at most (sk-driver's startup delay)."""
    total = 0.0
    for key in (STARTUP_DELAY, STARTUP_DELAY_MAX):
        value = annotations.get(key)
        if value:
            # One KWOK cannot read either makes the pod start at once: nothing to allow.
            with contextlib.suppress(DurationError):
                total += parse_duration(str(value), field=key, allow_zero=True) / 1000
    return total


def _scheduled_at(obj: Mapping[str, Any]) -> tuple[bool, datetime | None]:
    """Whether the pod is bound to a node, and when the scheduler said so (if it did)."""
    for condition in (obj.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("status") == "True":
            return True, parse_time(condition.get("lastTransitionTime"))
    return bool((obj.get("spec") or {}).get("nodeName")), None


class PodTracker:
    def __init__(self, *, prefix: str, group_of: Callable[[str], str | None]) -> None:
        self._prefix = f"{prefix}-"
        self._group_of = group_of
        self._pods: dict[str, PodState] = {}   # by uid
        self._done: list[PodState] = []        # restored from an earlier pods.csv, gone
        self._unfinished: dict[tuple[str, str], PodState] = {}  # restored, maybe still live
        self._phases: Counter[str] = Counter()  # live pods only

    def accepts(self, obj: Mapping[str, Any]) -> bool:
        return str((obj.get("metadata") or {}).get("namespace") or "").startswith(self._prefix)

    def observe(self, obj: Mapping[str, Any], *, trace_s: float, deleted: bool = False,
                trace_at: Callable[[datetime], float] | None = None) -> None:
        """One observation at ``trace_s``; ``trace_at`` (list items) converts object times."""
        if not self.accepts(obj):
            return
        metadata = obj.get("metadata") or {}
        uid = str(metadata.get("uid") or f"{metadata.get('namespace')}/{metadata.get('name')}")
        pod = self._pods.get(uid)
        if pod is None:
            pod = self._adopt(metadata) or PodState(namespace=str(metadata.get("namespace")),
                                                    name=str(metadata.get("name")))
            self._pods[uid] = pod
            if pod.created is None:
                created = parse_time(metadata.get("creationTimestamp"))
                pod.created = trace_at(created) if trace_at and created else trace_s
        elif pod.live:
            self._phases[pod.phase] -= 1
        bound, when = _scheduled_at(obj)
        if bound and pod.scheduled is None:
            pod.scheduled = trace_at(when) if trace_at and when else trace_s
        node = (obj.get("spec") or {}).get("nodeName")
        if node:
            pod.node = str(node)
            pod.group = self._group_of(pod.node) or pod.group
        pod.phase = str((obj.get("status") or {}).get("phase") or "Pending")
        pod.started = pod.started or pod.phase != "Pending"
        pod.allowance_s = _startup_allowance(metadata.get("annotations") or {})
        if pod.finished is None and (deleted or pod.phase in TERMINAL):
            pod.finished = trace_s
        pod.live = not deleted
        if pod.live:
            self._phases[pod.phase] += 1

    def replace(self, objs: Iterable[Mapping[str, Any]], *, trace_s: float,
                trace_at: Callable[[datetime], float]) -> None:
        """A fresh list: pods known but absent were deleted while nobody watched."""
        seen: set[str] = set()
        for obj in objs:
            if self.accepts(obj):
                metadata = obj.get("metadata") or {}
                seen.add(str(metadata.get("uid") or
                             f"{metadata.get('namespace')}/{metadata.get('name')}"))
                self.observe(obj, trace_s=trace_s, trace_at=trace_at)
        for pod in self._unfinished.values():  # restored, gone while nobody watched
            pod.finished = trace_s
            self._done.append(pod)
        self._unfinished.clear()
        for uid, pod in self._pods.items():
            if uid not in seen and pod.live:
                self._phases[pod.phase] -= 1
                pod.live = False
                if pod.finished is None:
                    pod.finished = trace_s

    def restore(self, rows: Iterable[PodRow]) -> None:
        """Pods of an earlier pods.csv (a restart): kept, and matched by name when still live."""
        for row in rows:
            pod = PodState(namespace=row.namespace, name=row.name, node=row.node,
                           group=row.group, created=row.created_trace_s,
                           scheduled=row.scheduled_trace_s, finished=row.finished_trace_s,
                           phase=row.phase, live=False)
            if pod.finished is None:
                self._unfinished[(pod.namespace, pod.name)] = pod
            else:
                self._done.append(pod)

    def _adopt(self, metadata: Mapping[str, Any]) -> PodState | None:
        key = (str(metadata.get("namespace")), str(metadata.get("name")))
        return self._unfinished.pop(key, None)

    def overdue(self, *, trace_s: float, grace_s: float, scale: TimeScale) -> list[PodState]:
        """Live pods bound to a node that have not started ``grace_s`` trace seconds (plus
        their own startup delay) after binding; each is returned, and flagged, once."""
        found = []
        for pod in self._pods.values():
            if (pod.live and not pod.started and not pod.unstarted and pod.node
                    and pod.scheduled is not None
                    and trace_s - pod.scheduled > grace_s + scale.to_trace(pod.allowance_s)):
                pod.unstarted = True
                found.append(pod)
        return found

    def counts(self) -> dict[str, int]:
        """Live pods per phase (Pending, Running, Succeeded, Failed)."""
        return {phase: self._phases.get(phase, 0) for phase in PHASES}

    def rows(self) -> list[PodRow]:
        states = [*self._done, *self._unfinished.values(), *self._pods.values()]
        states.sort(key=lambda p: (p.created if p.created is not None else float("inf"),
                                   p.namespace, p.name))
        for pod in states:
            if pod.group is None and pod.node:  # bound before its node was seen
                pod.group = self._group_of(pod.node)
        return [pod.row() for pod in states]
