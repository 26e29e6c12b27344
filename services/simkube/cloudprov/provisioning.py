"""How long a new instance takes to become a Node, and how many a group can get at all.

Real clouds take a minute or more between an instance request and a registered node, and
Cluster Autoscaler is built around that: while an instance is being created it counts as
*upcoming*, and CA plans the pending pods onto it instead of asking again. Nodes that appear
in zero time are, for a moment, neither upcoming nor usable, and CA over-provisions by
timing (issue #11). So each group has provisioning settings:

* ``delay``: placeholder pod created (IncreaseSize) → the Node object exists. Meanwhile the
  instance is ``instanceCreating`` under its future provider id.
* ``readyAfter``: Node created NotReady (tainted ``node.kubernetes.io/not-ready`` as a
  kubelet registers it) → Ready, played by KWOK's ``node-ready`` stage from an annotation.
* ``jitter``: up to this much more ``delay``, drawn from the run's seed (``current_run.py``) so
  two runs of one Simulation get the same delays in the same order.
* ``capacity``: the group (its zone) supplies at most this many nodes; instances beyond it
  fail with CA's ``OutOfResources`` error class, and CA backs the group off.

A group's first ``minSize`` instances are its baseline, present as in the cluster the trace
came from, so they come at once; only instances beyond it (what an autoscaler asked for)
wait. Durations are trace seconds here, as on a real cloud; the reconciler divides them by the
run's speed (``current_run.py``, ``core.simtime``) when it waits.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from simkube.cloudprov.fields import Section

KEYS = ("delay", "readyAfter", "jitter", "capacity")
DEFAULT_DELAY = 60.0
DEFAULT_READY_AFTER = 10.0
OUT_OF_RESOURCES = 1  # CA's cloudprovider.OutOfResourcesErrorClass
STOCKOUT_CODE = "InsufficientInstanceCapacity"


@dataclass(frozen=True, kw_only=True)
class Provisioning:
    delay: float = DEFAULT_DELAY
    ready_after: float = DEFAULT_READY_AFTER
    jitter: float = 0.0
    capacity: int | None = None

    def delay_for(self, share: float) -> float:
        """``delay`` plus ``share`` (in [0, 1), drawn per instance) of ``jitter``; trace s."""
        return self.delay + self.jitter * share

    def allows(self, nodes: int) -> bool:
        """Whether one more Node fits when the group already has ``nodes``."""
        return self.capacity is None or nodes < self.capacity

    def describe(self) -> str:
        capacity = "" if self.capacity is None else f", capacity {self.capacity}"
        jitter = f" (+ up to {self.jitter:g}s)" if self.jitter else ""
        return f"delay {self.delay:g}s{jitter}, ready after {self.ready_after:g}s{capacity}"


def parse_provisioning(data: Any, *, owner: str, field: str,
                       defaults: Provisioning) -> Provisioning:
    """The ``provisioning`` mapping at ``field``; unset keys keep ``defaults``."""
    section = Section(data, owner=owner, field=field)
    section.check_keys(KEYS)
    changes: dict[str, Any] = {}
    for key, attribute in (("delay", "delay"), ("readyAfter", "ready_after"),
                           ("jitter", "jitter")):
        if section.has(key):
            changes[attribute] = section.seconds(key)
    if section.has("capacity"):
        changes["capacity"] = section.integer("capacity")
    return replace(defaults, **changes)
