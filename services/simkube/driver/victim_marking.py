"""Before a replayed Deployment or ReplicaSet loses replicas, mark the pods that should go.

The applier calls ``VictimMarker.before_apply`` with every object it is about to apply, in the
object's own order. The marker remembers each owner's last applied replica count; when it
drops, it asks the ``VictimPlan`` (victims.py) which pods the recording removed and sets
their deletion cost before the apply goes out. The ReplicaSet controller acts on the lower
count only after the apply, so it usually sees the marks. Its cache can lag them, though;
the cost is best effort upstream, and sk-cloudprov, where a wrong pod means a wrong node,
waits for the ReplicaSet's status instead (cloudprov/removal.py). A mark that cannot be set
is logged and the scale-down goes on: the ReplicaSet then picks by its own rules.
"""

from __future__ import annotations

import asyncio
from typing import Any

from simkube.core.kubeapi import PODS, ApiError, KubeClient, merge_patch
from simkube.core.logs import get_logger
from simkube.driver.names import LIFECYCLE_FIELD_MANAGER
from simkube.driver.victims import DELETION_COST, Marks, PodName, VictimPlan
from simkube.trace import KubeObject, ObjectRef

log = get_logger(__name__)


def _replicas(obj: KubeObject) -> int | None:
    """``spec.replicas`` when the applied object sets it (an HPA's target does not)."""
    spec = obj.get("spec")
    replicas = spec.get("replicas") if isinstance(spec, dict) else None
    return replicas if isinstance(replicas, int) and not isinstance(replicas, bool) else None


class VictimMarker:
    def __init__(self, *, kube: KubeClient, plan: VictimPlan) -> None:
        self._kube = kube
        self._plan = plan
        self._replicas: dict[ObjectRef, int] = {}
        self.marked = 0  # pods given a deletion cost, for the replay's closing log

    async def before_apply(self, obj: KubeObject, offset_ms: int) -> None:
        ref = ObjectRef.of(obj)
        owner = str(ref)  # "apps/v1.Deployment ns/name", as lifecycles name owners
        replicas = _replicas(obj)
        if owner not in self._plan.owners or replicas is None:
            return
        previous = self._replicas.get(ref)
        self._replicas[ref] = replicas
        if previous is None or replicas >= previous:
            return
        marks = self._plan.scale_down(owner, offset_ms=offset_ms, removed=previous - replicas)
        if marks:
            await self._apply(marks)

    async def _apply(self, marks: Marks) -> None:
        changes: list[tuple[PodName, str | None]] = [
            *((pod, str(cost)) for pod, cost in marks.costs.items()),
            *((pod, None) for pod in marks.cleared)]
        done = await asyncio.gather(*(self._patch(pod, cost) for pod, cost in changes))
        self.marked += sum(done[:len(marks.costs)])
        log.debug("scale-down victims marked", owner=marks.owner, marked=len(marks.costs),
                  cleared=len(marks.cleared))

    async def _patch(self, pod: PodName, cost: str | None) -> bool:
        """Set (or with None remove) the pod's deletion cost; whether it was set."""
        namespace, name = pod
        body: dict[str, Any] = {"metadata": {"annotations": {DELETION_COST: cost}}}
        try:
            await merge_patch(self._kube, PODS.path(namespace=namespace, name=name), body,
                              field_manager=LIFECYCLE_FIELD_MANAGER)
        except ApiError as exc:
            if exc.code != 404:  # 404: the pod went on its own (evicted, completed)
                log.warning("deletion cost not set", pod=f"{namespace}/{name}",
                            error=str(exc))
            return False
        return True
