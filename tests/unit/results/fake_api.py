"""An API server for the recorder's list+watch loops: lists what it holds, then streams
what a test sends. A path it is told is absent answers 404, as for a CRD not installed."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import AsyncIterator, Mapping
from typing import Any

from simkube.core.kubeapi import ApiError

Object = dict[str, Any]


class FakeApi:
    def __init__(self, *, lists: Mapping[str, list[Object]] | None = None,
                 absent: tuple[str, ...] = ()) -> None:
        self._lists = {path: list(items) for path, items in (lists or {}).items()}
        self._absent = set(absent)
        self._streams: defaultdict[str, asyncio.Queue[Object]] = defaultdict(asyncio.Queue)
        self.requests: list[tuple[str, str]] = []

    async def request(self, method: str, path: str, *, query: Mapping[str, str] | None = None,
                      **_: Any) -> Object:
        self.requests.append((method, path))
        if path in self._absent:
            raise ApiError(code=404, reason="NotFound",
                           message="the server could not find the requested resource")
        if method != "GET":
            return {}
        selector = (query or {}).get("fieldSelector", "")
        items = [item for item in self._lists.get(path, []) if _selected(item, selector)]
        return {"items": items, "metadata": {"resourceVersion": "1"}}

    async def watch(self, path: str, *, query: Mapping[str, str],
                    idle_timeout: float | None = None) -> AsyncIterator[Object]:
        stream = self._streams[path + (query.get("fieldSelector") or "")]
        while True:
            yield await stream.get()

    def send(self, path: str, kind: str, obj: Object) -> None:
        """A watch event; Events go to the stream of their source's field selector."""
        source = (obj.get("source") or {}).get("component") if path.endswith("/events") else None
        key = path + (f"source={source}" if source else "")
        self._streams[key].put_nowait({"type": kind, "object": obj})

    async def settle(self) -> None:
        """Until every watch has taken what was sent."""
        for _ in range(100):
            await asyncio.sleep(0)
            if all(stream.empty() for stream in self._streams.values()):
                break
        await asyncio.sleep(0)


def _selected(item: Object, selector: str) -> bool:
    if not selector.startswith("source="):
        return True
    return (item.get("source") or {}).get("component") == selector.removeprefix("source=")
