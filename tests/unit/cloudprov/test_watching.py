from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from simkube.cloudprov.watching import collection_watch
from simkube.core.kubeapi import GoneError, KubeClient
from tests.unit.core.kubeapi.fakes import ScriptedKube, event

pytestmark = pytest.mark.unit


async def test_lists_then_watches_resumes_and_relists_after_gone() -> None:
    api = ScriptedKube(pages=[[{"metadata": {"name": "a"}}], [{"metadata": {"name": "b"}}]],
                       watches=[[event("ADDED", "c", "21"), event("BOOKMARK", "", "25")],
                                [event("DELETED", "b", "30")],  # ends cleanly: resume
                                GoneError(code=410, reason="Expired", message="too old")])
    lists: list[list[str]] = []
    events: list[tuple[str, str]] = []
    watch = collection_watch(
        api=cast(KubeClient, api), path="/api/v1/nodes", selector="x",
        on_list=lambda items: lists.append([i["metadata"]["name"] for i in items]),
        on_event=lambda kind, obj: events.append((kind, obj["metadata"]["name"])))
    task = asyncio.create_task(watch.run())
    try:
        for _ in range(400):
            if len(api.watch_queries) == 4:
                break
            await asyncio.sleep(0.01)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert watch.synced.is_set()
    assert lists == [["a", "b"], ["a", "b"]]  # the 410 made it list again
    assert events == [("ADDED", "c"), ("DELETED", "b")]  # bookmarks are not events
    assert [q["resourceVersion"] for q in api.watch_queries] == ["10", "25", "30", "20"]
    first: dict[str, Any] = dict(api.requests[0][3] or {})
    assert first == {"labelSelector": "x", "limit": "1000"}
    timeout = int(api.watch_queries[0]["timeoutSeconds"])
    assert 240 <= timeout <= 360
    assert api.idle_timeouts[0] == timeout + 30  # a silent stream is a broken one
