"""List, then watch, one collection for as long as sk-cloudprov runs.

Every answer sk-cloudprov gives comes from memory, so the memory must follow the cluster:
each collection is a core ``ListWatch`` (``simkube.core.kubeapi``) whose lists replace what
the index knew (deletions missed while disconnected are noticed) and whose events update it.
What is sk-cloudprov's own is the tuning: pages of 1,000 (thousands of Nodes and pods), a
watch silent for 30 s past its timeout is broken (``idle_margin``), and a jittered backoff
from 0.1 s up to 10 s, short because Cluster Autoscaler asks every few seconds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from simkube.core.kubeapi import Backoff, KubeClient, ListWatch

OnList = Callable[[list[dict[str, Any]]], None]
OnEvent = Callable[[str, dict[str, Any]], None]


def collection_watch(*, api: KubeClient, path: str, selector: str, on_list: OnList,
                     on_event: OnEvent, page_size: int = 1000,
                     watch_seconds: tuple[int, int] = (240, 360)) -> ListWatch:
    """The objects at ``path`` matching label ``selector``; run it with ``.run()``, wait
    for ``.synced``."""
    return ListWatch(kube=api, path=path, what=path, query={"labelSelector": selector},
                     on_list=on_list, on_event=on_event, page_size=page_size,
                     watch_seconds=watch_seconds, idle_margin=30.0,
                     backoff=Backoff(base=0.4, floor=0.1, cap=10.0))
