"""Workloads of a run whose controllers still owe it pods: the first thing a hold waits out.

When the replay scales a Deployment or starts a Job, the pods come from the deployment,
ReplicaSet and Job controllers a tenth of a second of wall time or more later: 1-2 s of
trace at speed 10 (fidelity run 5 measured the burst's pods created 1.1-1.7 s of trace
late), more at 20 and 50. Holding the run's clock while a controller owes pods puts them at
the trace instant the change was made, as a real cluster's controllers (milliseconds at
speed 1) do, and with them the scheduler's verdicts and Cluster Autoscaler's plan.

What a workload owes, read from its own object (no pod lists):

* a Deployment or ReplicaSet whose controller has not observed its generation yet
  (``status.observedGeneration``), or with fewer pods than it wants (``status.replicas`` <
  ``spec.replicas``: created pods, pending ones included). A Deployment's own count keeps a
  hold on between its controller's step and its ReplicaSet's, which two watches may bring in
  either order. A rollout's later steps wait for new pods to become available, which takes
  trace time: no count falls short while they wait, so none holds for them;
* a Job that is neither finished nor suspended, with fewer active pods than it wants (its
  parallelism, within the completions still to go), or not yet started by its controller.

A workload is owed for at most ``OWED_FOR_S`` of wall time per stretch: a controller that
has not made its pods by then is refused (quota, admission) or backing off after failures,
not lagging, and holding for it would only stall the run. The run's namespaces are
``<prefix>-<namespace>``.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Mapping
from typing import Any

from simkube.core.kubeapi import DEPLOYMENTS, JOBS, REPLICA_SETS, KubeClient, ListWatch, Resource

OWED_FOR_S = 2.0
FINISHED = ("Complete", "Failed", "SuccessCriteriaMet", "FailureTarget")


def _number(value: Any, default: int = 0) -> int:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else default


def _unobserved(obj: Mapping[str, Any]) -> bool:
    generation = _number((obj.get("metadata") or {}).get("generation"), default=1)
    return _number((obj.get("status") or {}).get("observedGeneration"), -1) < generation


def _job_owes(job: Mapping[str, Any]) -> bool:
    spec, status = job.get("spec") or {}, job.get("status") or {}
    if spec.get("suspend") is True:
        return False
    if any(c.get("type") in FINISHED and c.get("status") == "True"
           for c in status.get("conditions") or []):
        return False
    if not status.get("startTime"):
        return True  # its controller has not taken it up yet
    parallelism = _number(spec.get("parallelism"), default=1)
    succeeded = _number(status.get("succeeded"))
    completions = spec.get("completions")
    if isinstance(completions, int):
        wanted = min(parallelism, completions - succeeded)
    else:  # a work queue: done once any pod succeeded
        wanted = 0 if succeeded else parallelism
    return _number(status.get("active")) < wanted


def owes_pods(kind: str, obj: Mapping[str, Any]) -> bool:
    """Whether workload ``obj`` (of ``kind``: Deployment, ReplicaSet or Job) waits for its
    controller to create pods."""
    if kind == "Job":
        return _job_owes(obj)
    if _unobserved(obj):
        return True
    wanted = _number((obj.get("spec") or {}).get("replicas"), default=1)
    return _number((obj.get("status") or {}).get("replicas")) < wanted


class OwedPodsWatch:
    """Calls ``on_owed`` when a workload of the run starts owing pods; ``owing`` while any
    does (within ``owed_for_s`` of its start)."""

    def __init__(self, *, kube: KubeClient, prefix: str, on_owed: Callable[[], None],
                 owed_for_s: float = OWED_FOR_S,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self._prefix = f"{prefix}-"
        self._on_owed = on_owed
        self._owed_for_s = owed_for_s
        self._monotonic = monotonic
        self._since: dict[str, float] = {}  # uid → when it began to owe
        self.watches = [self._watch(kube, resource) for resource in
                        (DEPLOYMENTS, REPLICA_SETS, JOBS)]

    def _watch(self, kube: KubeClient, resource: Resource) -> ListWatch:
        return ListWatch(kube=kube, path=resource.path(), what=f"{resource.kind}s owing pods",
                         on_list=functools.partial(self._listed, resource.kind),
                         on_event=functools.partial(self._changed, resource.kind))

    def _listed(self, kind: str, items: list[dict[str, Any]]) -> None:
        ours = {uid: obj for obj in items if (uid := self._uid(kind, obj))}
        for uid in [u for u in self._since if u.startswith(f"{kind}/") and u not in ours]:
            del self._since[uid]  # gone while the watch was away
        for uid, obj in ours.items():
            self._saw(uid, kind, obj)

    def _changed(self, kind: str, event: str, obj: dict[str, Any]) -> None:
        uid = self._uid(kind, obj)
        if uid is None:
            return
        if event == "DELETED":
            self._since.pop(uid, None)
        else:
            self._saw(uid, kind, obj)

    async def run(self) -> None:
        await asyncio.gather(*(watch.run() for watch in self.watches))

    def owing(self) -> bool:
        now = self._monotonic()
        return any(now - since < self._owed_for_s for since in self._since.values())

    def _uid(self, kind: str, obj: Mapping[str, Any]) -> str | None:
        """``<kind>/<uid>`` if ``obj`` is in the run's namespaces (a list's items name no
        kind, and a re-list of one kind must forget only that kind's)."""
        metadata = obj.get("metadata") or {}
        if not str(metadata.get("namespace") or "").startswith(self._prefix):
            return None
        uid = str(metadata.get("uid") or "")
        return f"{kind}/{uid}" if uid else None

    def _saw(self, uid: str, kind: str, obj: Mapping[str, Any]) -> None:
        if not owes_pods(kind, obj):
            self._since.pop(uid, None)
        elif uid not in self._since:
            self._since[uid] = self._monotonic()
            self._on_owed()
