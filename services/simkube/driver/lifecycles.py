"""Which recorded lifetime each new pod gets: matched by owner and launch order.

A trace records, per owner (a bare Pod, a Job, a CronJob, a Deployment...), the runs of the
pods it launched, in launch order. SimKube's pod-spec hashes cannot be reproduced, so the
driver matches the n-th pod an owner launches in the simulation to the owner's n-th recorded
run. Lifetimes are trace time, so they shrink with the speed factor like everything else.

What a pod gets:
- a finished run: ``pod-lifetime`` = (end - start) / speed, and KWOK completes it then;
- a run still going when the trace ended: nothing; it runs until deleted;
- no run left (the simulation launched more pods than were recorded): Job pods complete at
  once, as KWOK completes any Job pod without lifecycle data; other pods run until deleted.

Recorded runs of replica controllers (Deployments, StatefulSets, DaemonSets, ReplicaSets) are
not lifetimes: their pods restart ``Always``, so a run ends only when the controller deletes
the pod (a scale-down, a rollout), and the replay does that itself from the recorded
objects. Completing such a pod at its recorded end instead made the ReplicaSet replace it — a
pod, a scheduling and a pending time the recorded cluster never had.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from simkube.core.durations import go_duration
from simkube.core.simtime import TimeScale
from simkube.driver.names import POD_LIFETIME, POD_LIFETIME_MAX
from simkube.trace import PodLifecycle, PodRun

REPLICA_CONTROLLERS = frozenset({"apps/v1.Deployment", "apps/v1.StatefulSet",
                                 "apps/v1.DaemonSet", "apps/v1.ReplicaSet",
                                 "v1.ReplicationController"})


def owner_key(kind_key: str, ns_name: str) -> str:
    """How a pod template names its owner in the ``lifecycle-owner`` annotation."""
    return f"{kind_key} {ns_name}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Assignment:
    owner: str
    launch: int  # 0-based launch order under the owner
    lifetime_ms: int | None  # None: the pod runs until deleted
    annotations: dict[str, str] = field(default_factory=dict)


class LifetimePlan:
    """Hands out recorded runs in launch order; one plan per simulation."""

    def __init__(self, lifecycles: list[PodLifecycle], *, scale: TimeScale,
                 jitter_ms: int = 0) -> None:
        self._runs: dict[str, tuple[PodRun, ...]] = {}
        for lifecycle in lifecycles:
            if lifecycle.owner_kind in REPLICA_CONTROLLERS:
                continue
            key = owner_key(lifecycle.owner_kind, lifecycle.owner)
            self._runs[key] = self._runs.get(key, ()) + lifecycle.runs
        self._scale = scale
        self._jitter_ms = jitter_ms
        self._launched: Counter[str] = Counter()

    @property
    def owners(self) -> frozenset[str]:
        """Owner keys with at least one recorded run."""
        return frozenset(key for key, runs in self._runs.items() if runs)

    def recorded_lifetime_ms(self, run: PodRun) -> int | None:
        if run.end_ms is None:
            return None
        return max(0, round(self._scale.to_wall(run.end_ms - run.start_ms)))

    def assign(self, owner: str, *, job_owned: bool) -> Assignment:
        """The next launch of ``owner``: its lifetime and the annotations that tell KWOK."""
        launch = self._launched[owner]
        self._launched[owner] += 1
        runs = self._runs.get(owner, ())
        if launch < len(runs):
            lifetime = self.recorded_lifetime_ms(runs[launch])
        else:
            lifetime = 0 if job_owned else None
        annotations: dict[str, str] = {}
        if lifetime is not None:
            annotations[POD_LIFETIME] = go_duration(lifetime)
            if self._jitter_ms:
                annotations[POD_LIFETIME_MAX] = go_duration(lifetime + self._jitter_ms)
        return Assignment(owner=owner, launch=launch, lifetime_ms=lifetime,
                          annotations=annotations)
