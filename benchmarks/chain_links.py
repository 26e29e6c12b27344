"""The links of one scale-up as seen from outside, stamped on the wall clock as they happen.

``ChainWatch`` lists and watches the app's pods, the Nodes, Cluster Autoscaler's Events and
the node groups' Deployments (sk-cloudprov's IncreaseSize raises their replicas), and keeps
the first wall time of each link of the first scale-up: the earliest pod of the app created,
the first of its pods marked Unschedulable, the first raise of a group's replicas (CA's plan
carried out), CA's first ``TriggeredScaleUp`` Event (posted after it), the first Node that
was not there at the start, that Node Ready, the first pod bound to it, and that pod Running.
Stamps are taken when the watch event arrives, so each link includes the watch's own delivery
(milliseconds on loopback), as any observer's would. Each link gets a wall stamp and, from
``trace_now`` (sk-driver's own clock, asked as the link is seen), a trace stamp: wall time
times the speed would count time the run's clock was held for the autoscaler.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable
from typing import Any

from simkube.cloudprov.naming import GROUP_LABEL
from simkube.core.kubeapi import DEPLOYMENTS, EVENTS, NODES, PODS, KubeClient, ListWatch
from simkube.results.autoscaler_events import COMPONENT

# In the order they happen: CA carries out its plan (IncreaseSize) before it posts the
# TriggeredScaleUp Event that announces it, so the Event is reported beside the chain.
LINKS = ("created", "unschedulable", "increased", "node_created", "node_ready", "bound",
         "running")
ANNOUNCED = "announced"
Object = dict[str, Any]


def _condition(obj: Object, kind: str) -> Object:
    for condition in (obj.get("status") or {}).get("conditions") or []:
        if condition.get("type") == kind:
            return dict(condition)
    return {}


class ChainWatch:
    def __init__(self, *, kube: KubeClient, app: str,
                 trace_now: Callable[[], Awaitable[float | None]]) -> None:
        self._at: dict[str, float] = {}
        self._trace_at: dict[str, float] = {}
        self._trace_now = trace_now
        self._asking: set[asyncio.Task[None]] = set()
        self._known_nodes: set[str] = set()
        self._new_node: str | None = None
        self._bound_pod: str | None = None
        self._pods: dict[str, tuple[str, str]] = {}  # name -> (node, phase)
        self._replicas: dict[str, int] = {}
        self._start = time.monotonic()
        self._watches = [
            ListWatch(kube=kube, path=NODES.path(), what="nodes",
                      on_list=self._nodes_listed, on_event=self._node),
            ListWatch(kube=kube, path=DEPLOYMENTS.path(), what="groups",
                      query={"labelSelector": GROUP_LABEL},
                      on_list=self._groups_listed, on_event=self._group),
            ListWatch(kube=kube, path=PODS.path(), what="pods",
                      query={"labelSelector": f"app={app}"},
                      on_list=lambda items: None, on_event=self._pod),
            ListWatch(kube=kube, path=EVENTS.path(), what="ca events",
                      query={"fieldSelector": f"source={COMPONENT}"},
                      on_list=lambda items: None, on_event=self._event)]
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        for watch in self._watches:
            await watch.list()
        self._start = time.monotonic()
        self._tasks = [asyncio.create_task(watch.run()) for watch in self._watches]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, *self._asking, return_exceptions=True)

    def links(self, *, speed: float, held_wall_s: float) -> dict[str, Any]:
        """Each link's wall and trace seconds after the pod was created, the trace seconds
        of each step (from the link before), and what was missed."""
        names = (*LINKS, ANNOUNCED)
        wall = _since(self._at, names)
        trace = _since(self._trace_at, names)
        steps: dict[str, float | None] = {}
        for before, link in itertools.pairwise(LINKS):
            now, then = trace[link], trace[before]
            steps[link] = None if now is None or then is None else round(now - then, 2)
        return {"wall_s": wall, "trace_s": trace, "steps_trace_s": steps,
                "total_trace_s": trace["running"], "speed": speed, "held_s": held_wall_s,
                "missed": [link for link in names if wall[link] is None]}

    def _mark(self, link: str) -> None:
        if link in self._at:
            return
        self._at[link] = time.monotonic()
        task = asyncio.get_running_loop().create_task(self._stamp_trace(link))
        self._asking.add(task)
        task.add_done_callback(self._asking.discard)

    async def _stamp_trace(self, link: str) -> None:
        now = await self._trace_now()
        if now is not None:
            self._trace_at[link] = now

    def _nodes_listed(self, items: list[Object]) -> None:
        self._known_nodes = {str(item["metadata"]["name"]) for item in items}

    def _node(self, kind: str, obj: Object) -> None:
        name = str(obj["metadata"]["name"])
        if kind == "DELETED" or name in self._known_nodes:
            return
        if self._new_node is None:
            self._new_node = name
            self._mark("node_created")
        if name == self._new_node and _condition(obj, "Ready").get("status") == "True":
            self._mark("node_ready")
        self._follow_pods()  # the pod watch may have seen the binding before this Node

    def _groups_listed(self, items: list[Object]) -> None:
        self._replicas = {str(item["metadata"]["name"]): int(item["spec"].get("replicas") or 0)
                          for item in items}

    def _group(self, kind: str, obj: Object) -> None:
        name, replicas = str(obj["metadata"]["name"]), int(obj["spec"].get("replicas") or 0)
        if kind != "DELETED" and replicas > self._replicas.get(name, replicas):
            self._mark("increased")
        self._replicas[name] = replicas

    def _pod(self, kind: str, obj: Object) -> None:
        if kind == "DELETED":
            return
        self._mark("created")
        scheduled = _condition(obj, "PodScheduled")
        if scheduled.get("status") == "False" and scheduled.get("reason") == "Unschedulable":
            self._mark("unschedulable")
        self._pods[str(obj["metadata"]["name"])] = (
            str((obj.get("spec") or {}).get("nodeName") or ""),
            str((obj.get("status") or {}).get("phase") or ""))
        self._follow_pods()

    def _follow_pods(self) -> None:
        for name, (node, phase) in self._pods.items():
            if self._bound_pod is None and node and node == self._new_node:
                self._bound_pod = name
                self._mark("bound")
            if name == self._bound_pod and phase == "Running":
                self._mark("running")

    def _event(self, kind: str, obj: Object) -> None:
        if kind != "DELETED" and obj.get("reason") == "TriggeredScaleUp":
            self._mark(ANNOUNCED)


def _since(stamps: dict[str, float], names: tuple[str, ...]) -> dict[str, float | None]:
    """Each stamp's seconds after the pod's creation (None: not seen)."""
    created = stamps.get("created")
    return {name: (None if created is None or name not in stamps
                   else round(stamps[name] - created, 3)) for name in names}
