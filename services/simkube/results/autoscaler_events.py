"""Scale decisions Cluster Autoscaler announces as Kubernetes Events, as scaling rows.

CA reports what it *decided* (the node counts the recorder observes are what happened), in
free-text messages: ``TriggeredScaleUp`` on each pod that caused a scale-up ("pod triggered
scale-up: [{general 1->3 (max: 5)}]"), ``ScaledUpGroup`` on its status ConfigMap ("Scale-up:
setting group general size to 3 instead of 1 (max: 5)"), ``ScaleDown`` / ``ScaleDownEmpty``
on nodes and its ConfigMap ("Scale-down: removing empty node n1"). Deltas are parsed where
the message carries them, else 0. One decision is announced many times — on every pod that
triggered a scale-up and once more on the status ConfigMap (``ScaledUpGroup``), a removal on
the node and on the ConfigMap — so an identical (decision, group, delta, nodes after, node)
within ``window`` seconds is one decision, whichever reason announced it. An Event whose
``count`` grows is a new occurrence; one already seen (after a re-list) is not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from simkube.results.pods import parse_time

COMPONENT = "cluster-autoscaler"
SCALE_UP_REASONS = frozenset({"TriggeredScaleUp", "ScaledUpGroup"})
REASONS = SCALE_UP_REASONS | {"ScaleDown", "ScaleDownEmpty"}
_TRIGGERED = re.compile(r"\{\s*([^\s{}]+)\s+(\d+)\s*->\s*(\d+)")
_SET_SIZE = re.compile(r"group\s+(\S+)\s+size\s+to\s+(\d+)\s+instead\s+of\s+(\d+)")
_NODE = re.compile(r"node\s+\"?([a-z0-9][a-z0-9.-]*)\"?")
_REMOVING = re.compile(r"\bremoving\b", re.IGNORECASE)


@dataclass(frozen=True, kw_only=True)
class ScaleChange:
    reason: str
    group: str
    delta: int
    nodes_after: int
    node: str = ""  # the node a scale-down removes

    @property
    def decision(self) -> tuple[str, str, int, int, str]:
        kind = "up" if self.reason in SCALE_UP_REASONS or self.delta > 0 else "down"
        return (kind, self.group, self.delta, self.nodes_after, self.node)


def is_autoscaler_event(obj: Mapping[str, Any]) -> bool:
    source = obj.get("source") or {}
    return COMPONENT in (source.get("component"), obj.get("reportingComponent"))


def event_time(obj: Mapping[str, Any]) -> datetime | None:
    series = obj.get("series") or {}
    for value in (series.get("lastObservedTime"), obj.get("lastTimestamp"),
                  obj.get("eventTime"), obj.get("firstTimestamp"),
                  (obj.get("metadata") or {}).get("creationTimestamp")):
        when = parse_time(value)
        if when is not None:
            return when
    return None


def parse_changes(obj: Mapping[str, Any], *, group_of: Callable[[str], str | None],
                  counts: Mapping[str, int]) -> list[ScaleChange]:
    """The scale changes one CA Event announces (empty for other reasons or unknown groups)."""
    reason = str(obj.get("reason") or "")
    if reason not in REASONS:
        return []
    message = str(obj.get("message") or obj.get("note") or "")
    if reason == "TriggeredScaleUp":
        return [ScaleChange(reason=reason, group=group, delta=int(after) - int(before),
                            nodes_after=int(after))
                for group, before, after in _TRIGGERED.findall(message)]
    if reason == "ScaledUpGroup":
        return [ScaleChange(reason=reason, group=group, delta=int(after) - int(before),
                            nodes_after=int(after))
                for group, after, before in _SET_SIZE.findall(message)]
    involved = obj.get("involvedObject") or obj.get("regarding") or {}
    node = (str(involved.get("name") or "") if involved.get("kind") == "Node" else "")
    if not node:
        found = _NODE.search(message)
        node = found.group(1) if found else ""
    group = group_of(node) if node else None
    if group is None:
        return []
    delta = -1 if _REMOVING.search(message) else 0
    return [ScaleChange(reason=reason, group=group, delta=delta, node=node,
                        nodes_after=max(counts.get(group, 0) + delta, 0))]


class AutoscalerEvents:
    """Which CA Events are new, and which of their changes are not repeats."""

    def __init__(self, *, window: float = 30.0) -> None:
        self._window = window
        self._counts: dict[str, int] = {}  # event uid -> count seen
        self._recent: dict[tuple[str, str, int, int, str], float] = {}

    def is_new(self, obj: Mapping[str, Any]) -> bool:
        uid = str((obj.get("metadata") or {}).get("uid") or "")
        count = int(obj.get("count") or (obj.get("series") or {}).get("count") or 1)
        if self._counts.get(uid, 0) >= count:
            return False
        self._counts[uid] = count
        return True

    def fresh(self, changes: list[ScaleChange], *, wall_s: float) -> list[ScaleChange]:
        """Drop changes identical to one seen less than ``window`` seconds ago."""
        kept = []
        for change in changes:
            key = change.decision
            last = self._recent.get(key)
            self._recent[key] = wall_s
            if last is None or wall_s - last >= self._window:
                kept.append(change)
        return kept
