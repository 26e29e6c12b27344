"""Gives each new pod of a lifecycle owner its recorded lifetime, as KWOK stage annotations.

Controllers create pods from templates, and a template cannot say "the third pod lives 30 s".
So the rewriter marks templates of owners with recorded lifecycles (``lifecycle-owner``), and
this watcher sees every pod of the simulation as it is created, in creation order (one
watch, label-selected), asks the ``LifetimePlan`` for that owner's next run and patches the
lifetime onto the pod. KWOK's instant Job completion ignores marked pods, and the
lifetime stage fires only once the annotation is there, so no pod can complete before its
lifetime is known, however slow this watcher is; the lifetime counts from when KWOK sees both
"Running" and the annotation. Pods seen again after a reconnect are recognised by uid and by
the annotation itself, so no pod is counted twice.

Pods of Deployments and ReplicaSets get no lifetime (their controllers end them). The
``VictimPlan`` is told when each starts (the order sk-tracer records their runs in) and on
which instance type (one ``GET`` per node, remembered), and when each goes, so a scale-down
can be resolved as recorded (victims.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from simkube.core.kubeapi import (
    PODS,
    ApiError,
    Backoff,
    Cursor,
    GoneError,
    KubeClient,
    NodeTypes,
    merge_patch,
    retry,
    watch_from,
)
from simkube.core.logs import get_logger
from simkube.driver.lifecycles import Assignment, LifetimePlan
from simkube.driver.names import (
    LIFECYCLE_FIELD_MANAGER,
    LIFECYCLE_OWNER,
    POD_LIFETIME,
    SIMULATION_LABEL,
)
from simkube.driver.victims import PodName, VictimPlan

log = get_logger(__name__)
RETRY_DELAY = 1.0
PATCH_ATTEMPTS = 5


def _pod_name(metadata: dict[str, Any]) -> PodName:
    return str(metadata.get("namespace")), str(metadata.get("name"))


def _creation_order(pod: dict[str, Any]) -> tuple[str, str]:
    metadata = pod.get("metadata", {})
    return metadata.get("creationTimestamp", ""), metadata.get("name", "")


class PodTimer:
    def __init__(self, *, kube: KubeClient, simulation: str, plan: LifetimePlan,
                 timed: Callable[[Assignment], None] = lambda _: None,
                 victims: VictimPlan | None = None) -> None:
        self._kube = kube
        self._victims = victims
        self._node_types = NodeTypes(kube)
        self._selector = f"{SIMULATION_LABEL}={simulation}"
        self._plan = plan
        self._timed = timed
        self._seen: set[str] = set()
        self._patches: set[asyncio.Task[None]] = set()
        self.ready = asyncio.Event()  # set once the first list is done and the watch is open

    async def run(self) -> None:
        """Watch until cancelled; reconnects (and re-lists after 410 Gone) on its own."""
        try:
            while True:
                try:
                    version = await self._list()
                    self.ready.set()
                    await self._watch(version)
                except GoneError:
                    continue  # the version expired: list again at once
                except ApiError as exc:
                    log.warning("pod watch interrupted", selector=self._selector,
                                error=str(exc))
                    await asyncio.sleep(RETRY_DELAY)
        finally:
            for task in self._patches:
                task.cancel()

    async def flush(self) -> None:
        """Wait for the annotation patches already started."""
        if self._patches:
            await asyncio.gather(*self._patches, return_exceptions=True)

    async def _list(self) -> str:
        listing = await self._kube.request("GET", PODS.path(),
                                           query={"labelSelector": self._selector})
        items = listing.get("items") or []
        if self._victims is not None:  # deletions missed while the watch was down
            self._victims.retain({_pod_name(pod.get("metadata", {})) for pod in items})
        for pod in sorted(items, key=_creation_order):
            await self._see(pod)
        return str(listing.get("metadata", {}).get("resourceVersion", ""))

    async def _watch(self, version: str) -> None:
        cursor = Cursor(version)
        while True:  # a clean end resumes from the last version; 410 Gone lists again
            async for kind, obj in watch_from(self._kube, PODS.path(), cursor,
                                              query={"labelSelector": self._selector}):
                if kind in ("ADDED", "MODIFIED"):
                    await self._see(obj)
                elif kind == "DELETED":
                    self._gone(obj.get("metadata", {}))

    def _gone(self, metadata: dict[str, Any]) -> None:
        if self._victims is not None:
            self._victims.gone(_pod_name(metadata))

    async def _note_start(self, pod: dict[str, Any]) -> None:
        """Tell the victim plan of a replica controller's pod that has started, and on
        which instance type; awaited in watch order, so pods are numbered as they start."""
        metadata, status = pod.get("metadata", {}), pod.get("status") or {}
        if self._victims is None or metadata.get("deletionTimestamp"):
            return
        owner = (metadata.get("annotations") or {}).get(LIFECYCLE_OWNER)
        name = _pod_name(metadata)
        if (owner in self._victims.owners and not self._victims.knows(name)
                and (status.get("startTime") or status.get("phase") == "Running")):
            node_type = await self._node_types.of((pod.get("spec") or {}).get("nodeName"))
            self._victims.started(owner, pod=name, node_type=node_type)

    async def _see(self, pod: dict[str, Any]) -> None:
        metadata = pod.get("metadata", {})
        if metadata.get("deletionTimestamp"):
            self._gone(metadata)
        await self._note_start(pod)
        uid = metadata.get("uid", "")
        if uid in self._seen:
            return
        self._seen.add(uid)
        annotations = metadata.get("annotations") or {}
        owner = annotations.get(LIFECYCLE_OWNER)
        if not owner or POD_LIFETIME in annotations or metadata.get("deletionTimestamp"):
            return
        job_owned = any(ref.get("kind") == "Job" for ref in metadata.get("ownerReferences") or [])
        assignment = self._plan.assign(owner, job_owned=job_owned)
        self._timed(assignment)
        if assignment.annotations:
            task = asyncio.create_task(self._patch(metadata, assignment))
            self._patches.add(task)
            task.add_done_callback(self._patches.discard)

    async def _patch(self, metadata: dict[str, Any], assignment: Assignment) -> None:
        path = PODS.path(namespace=str(metadata.get("namespace")), name=str(metadata.get("name")))
        body = {"metadata": {"annotations": assignment.annotations}}
        try:  # transient refusals are retried after 0.1, 0.2, 0.4, 0.8 s
            await retry(lambda: merge_patch(self._kube, path, body,
                                            field_manager=LIFECYCLE_FIELD_MANAGER),
                        attempts=PATCH_ATTEMPTS, backoff=Backoff(base=0.1, jitter=False))
        except ApiError as exc:
            if exc.code != 404:  # 404: deleted before it got its lifetime
                log.warning("pod lifetime not set", pod=path, error=str(exc))
