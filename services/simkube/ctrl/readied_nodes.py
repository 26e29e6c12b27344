"""Nodes turning schedulable during a run: the last wall latency before a pending pod runs.

sk-cloudprov readies a new node at its readiness deadline on the run's clock (the node's
ready-after annotation becomes ``0s``); then KWOK marks it Ready, the node lifecycle
controller takes its ``node.kubernetes.io/not-ready`` taint off, and the scheduler tries the
pending pods again. Each step is a watch event and an API write away: 90-180 ms of wall
time measured at speed 20, 2-4 s of trace, during which the pods the node fits stay pending
in the replay where the recorded cluster bound them within a tenth of a second.

So each of those steps (the annotation's change, Ready, the taint gone) asks the
unschedulable pods of the run to be judged again (``UnschedulableWatch.rejudge``) and
wakes the holder: the clock goes at real time until each such pod has been bound or given a new
verdict, at most ``REJUDGE_S`` of wall time. Only steps a watch event shows count: the
first list only learns where each node stands.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from simkube.cloudprov.naming import NOT_READY_TAINT_KEY, READY_AFTER_ANNOTATION, READY_NOW
from simkube.core.kubeapi import NODES, KubeClient, ListWatch


def readiness(node: dict[str, Any]) -> tuple[bool, bool, bool]:
    """(readied by sk-cloudprov or never held, Ready, without the not-ready taint)."""
    metadata, spec = node.get("metadata") or {}, node.get("spec") or {}
    held = (metadata.get("annotations") or {}).get(READY_AFTER_ANNOTATION)
    ready = any(c.get("type") == "Ready" and c.get("status") == "True"
                for c in (node.get("status") or {}).get("conditions") or [])
    tainted = any(t.get("key") == NOT_READY_TAINT_KEY for t in spec.get("taints") or [])
    return held in (None, READY_NOW), ready, not tainted


class ReadiedNodesWatch:
    """Calls ``on_step`` whenever a node takes a step towards taking pods."""

    def __init__(self, *, kube: KubeClient, on_step: Callable[[], None]) -> None:
        self._on_step = on_step
        self._states: dict[str, tuple[bool, bool, bool]] = {}
        self.watch = ListWatch(kube=kube, path=NODES.path(), what="nodes turning ready",
                               on_list=self._listed, on_event=self._changed)

    async def run(self) -> None:
        await self.watch.run()

    def _listed(self, nodes: list[dict[str, Any]]) -> None:
        self._states = {str((node.get("metadata") or {}).get("name")): readiness(node)
                        for node in nodes}

    def _changed(self, kind: str, node: dict[str, Any]) -> None:
        name = str((node.get("metadata") or {}).get("name"))
        if kind == "DELETED":
            self._states.pop(name, None)
            return
        now = readiness(node)
        before = self._states.get(name, (False, False, False))
        self._states[name] = now
        if any(after and not earlier for after, earlier in zip(now, before, strict=True)):
            self._on_step()
