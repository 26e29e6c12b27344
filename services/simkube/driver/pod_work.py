"""Holding the clock as the replay applies work that makes pods, before sk-ctrl can.

sk-ctrl holds a run's clock while a workload owes pods (``ctrl/owed_pods.py``), so the
controllers' wall latency between a scale-up and its pods passes at real time, as in the
recording. It learns of the scale-up from a watch, though, and the tens of milliseconds
before its Hold arrives still pass at the run's speed: fidelity run 16 found a burst's pods
created 0.1 s of trace late at 10x, 0.3 s at 20x and 0.65 s at 50x, where the truth made
them 45 ms after the scale-up; which of them Cluster Autoscaler's next loop saw changed
with it. sk-driver knows before anyone: just before it applies an object that makes pods,
it holds the clock itself for a short while (``POD_WORK_HOLD_S``), long enough for sk-ctrl's
hold to take over (a Hold while held extends it) and short enough that a hold nobody takes
over costs little.

What makes pods, judged from the trace's objects alone (no reads of the cluster): a
Deployment, ReplicaSet or StatefulSet applied for the first time with replicas, or with more
replicas than its last apply; a Job, DaemonSet or bare Pod applied for the first time; a
Job the driver fires for a CronJob (``cronjobs.py`` says so itself). A Job unsuspended later
is left to sk-ctrl's watch.
"""

from __future__ import annotations

from collections.abc import Callable

from simkube.trace import KubeObject, ObjectRef

POD_WORK_HOLD_S = 0.25  # wall seconds; sk-ctrl's watch takes tens of milliseconds
SCALED = frozenset({("apps/v1", "Deployment"), ("apps/v1", "ReplicaSet"),
                    ("apps/v1", "StatefulSet")})
CREATED = frozenset({("batch/v1", "Job"), ("apps/v1", "DaemonSet"), ("v1", "Pod")})


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
        self._replicas: dict[ObjectRef, int] = {}  # last applied, of the scaled kinds
        self._created: set[ObjectRef] = set()
        self.holds = 0  # applies that held, for the replay's closing log

    def makes_pods(self, obj: KubeObject) -> bool:
        ref = ObjectRef.of(obj)
        kind = (ref.api_version, ref.kind)
        if kind in SCALED:
            replicas = _replicas(obj)
            previous = self._replicas.get(ref, 0)
            self._replicas[ref] = replicas
            return replicas > previous
        if kind in CREATED:
            first = ref not in self._created
            self._created.add(ref)
            return first
        return False

    def deleted(self, ref: ObjectRef) -> None:
        """The replay deleted ``ref``: applying it again creates it again."""
        self._replicas.pop(ref, None)
        self._created.discard(ref)

    async def before_apply(self, obj: KubeObject, offset_ms: int) -> None:
        if self.makes_pods(obj):
            self.holds += 1
            self._hold()
