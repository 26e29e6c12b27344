from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, cast

import pytest

from simkube.cloudprov.kubeapi import KubeApi, KubeError
from simkube.cloudprov.watching import Watch

pytestmark = pytest.mark.unit


class ScriptedApi:
    """Lists in pages, then plays one scripted watch stream per call."""

    def __init__(self, streams: list[list[dict[str, Any] | KubeError]]) -> None:
        self.streams = streams
        self.lists = 0
        self.watch_versions: list[str] = []

    async def request(self, method: str, path: str, *, query: dict[str, str]) -> dict[str, Any]:
        self.lists += 1
        if "continue" not in query:
            return {"items": [{"metadata": {"name": f"a{self.lists}"}}],
                    "metadata": {"continue": "page2"}}
        return {"items": [{"metadata": {"name": "b"}}],
                "metadata": {"resourceVersion": f"{self.lists}0"}}

    async def watch(self, path: str, *, query: dict[str, str],
                    idle_timeout: float) -> AsyncIterator[dict[str, Any]]:
        self.watch_versions.append(query["resourceVersion"])
        stream = self.streams.pop(0) if self.streams else []
        for item in stream:
            if isinstance(item, KubeError):
                raise item
            yield item
        if not self.streams:
            await asyncio.Event().wait()  # an idle watch


def event(kind: str, name: str, version: str) -> dict[str, Any]:
    return {"type": kind, "object": {"metadata": {"name": name, "resourceVersion": version}}}


async def test_lists_then_watches_resumes_and_relists_after_gone() -> None:
    api = ScriptedApi([
        [event("ADDED", "c", "21"), event("BOOKMARK", "", "25")],  # ends cleanly: resume
        [event("DELETED", "b", "30"), KubeError(code=410, reason="Expired", message="too old")],
        [],
    ])
    lists: list[list[str]] = []
    events: list[tuple[str, str]] = []
    watch = Watch(api=cast(KubeApi, api), path="/api/v1/nodes", selector="x",
                  on_list=lambda items: lists.append([i["metadata"]["name"] for i in items]),
                  on_event=lambda kind, obj: events.append((kind, obj["metadata"]["name"])))
    task = asyncio.create_task(watch.run())
    try:
        for _ in range(300):
            if len(api.watch_versions) == 3:
                break
            await asyncio.sleep(0.01)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert watch.synced.is_set()
    assert lists == [["a1", "b"], ["a3", "b"]]  # the 410 made it list again
    assert events == [("ADDED", "c"), ("DELETED", "b")]  # bookmarks are not events
    assert api.watch_versions == ["20", "25", "40"]
