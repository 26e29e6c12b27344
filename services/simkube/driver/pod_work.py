"""Holding the clock as the replay applies work that makes pods, before sk-ctrl can.

sk-ctrl holds a run's clock while a workload owes pods (``ctrl/owed_pods.py``), so the
controllers' wall latency between a scale-up and its pods passes at real time, as in the
recording. It learns of the scale-up from a watch, though, and the tens of milliseconds
before its Hold arrives still pass at the run's speed: fidelity run 16 found a burst's pods
created 0.1 s of trace late at 10x, 0.3 s at 20x and 0.65 s at 50x, where the truth made
them 45 ms after the scale-up; which of them Cluster Autoscaler's next loop saw changed
with it. sk-driver knows before anyone: just before it applies an object that makes pods,
it holds the clock itself for a short while (``core.simtime.BRIEF_HOLD_S``), long enough
for sk-ctrl's hold to take over (a Hold while held extends it) and short enough that a hold
nobody takes over costs little (``holds.py``).

What makes pods, judged from the trace's objects alone (no reads of the cluster): a
Deployment, ReplicaSet or StatefulSet applied for the first time with replicas, with more
replicas than its last apply, or with a new pod template (a rollout's first pods); a Job
that is not suspended, a DaemonSet or a bare Pod applied for the first time; a Job the
driver fires for a CronJob (``cronjobs.py`` says so itself). A Job unsuspended later is left
to sk-ctrl's watch; an object the trace re-creates after deleting its namespace counts as
already seen (only the namespace's delete reaches the driver).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from simkube.trace import KubeObject, ObjectRef

SCALED = frozenset({("apps/v1", "Deployment"), ("apps/v1", "ReplicaSet"),
                    ("apps/v1", "StatefulSet")})
CREATED = frozenset({("batch/v1", "Job"), ("apps/v1", "DaemonSet"), ("v1", "Pod")})


def _template(obj: KubeObject) -> str:
    spec = obj.get("spec")
    return json.dumps(spec.get("template") if isinstance(spec, dict) else None, sort_keys=True)


def _suspended(obj: KubeObject) -> bool:
    spec = obj.get("spec")
    return isinstance(spec, dict) and spec.get("suspend") is True


def _replicas(obj: KubeObject) -> int:
    """``spec.replicas``, 1 when unset (the API server's default)."""
    spec = obj.get("spec")
    replicas = spec.get("replicas", 1) if isinstance(spec, dict) else 1
    return replicas if isinstance(replicas, int) and not isinstance(replicas, bool) else 1


class PodWork:
    """Tells, object by object in apply order, whether applying it makes pods; calls
    ``hold`` just before such an apply goes out."""

    def __init__(self, *, hold: Callable[[], None]) -> None:
        self._hold = hold
        self._replicas: dict[ObjectRef, tuple[int, str]] = {}  # last applied: replicas, template
        self._created: set[ObjectRef] = set()
        self.holds = 0  # applies that held, for the replay's closing log

    def makes_pods(self, obj: KubeObject) -> bool:
        ref = ObjectRef.of(obj)
        kind = (ref.api_version, ref.kind)
        if kind in SCALED:
            replicas, template = _replicas(obj), _template(obj)
            previous, before = self._replicas.get(ref, (0, template))
            self._replicas[ref] = (replicas, template)
            return replicas > previous or (replicas > 0 and template != before)
        if kind in CREATED:
            first = ref not in self._created
            self._created.add(ref)
            return first and not _suspended(obj)
        return False

    def deleted(self, ref: ObjectRef) -> None:
        """The replay deleted ``ref``: applying it again creates it again."""
        self._replicas.pop(ref, None)
        self._created.discard(ref)

    async def before_apply(self, obj: KubeObject, offset_ms: int) -> None:
        if self.makes_pods(obj):
            self.holds += 1
            self._hold()
