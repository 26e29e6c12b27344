"""List, then watch, one collection for as long as sk-cloudprov runs.

Every answer sk-cloudprov gives comes from memory, so the memory must follow the cluster: a
``Watch`` lists its collection (in pages), hands the full list to ``on_list`` (which replaces
what was known, so deletions missed while disconnected are noticed), then streams events to
``on_event`` from the list's resourceVersion, with bookmarks keeping that version fresh. When
the version expires (410) or the connection breaks, it lists again after a jittered backoff.
``synced`` is set once the first list has been delivered.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Any

from simkube.cloudprov.kubeapi import KubeApi, KubeError
from simkube.core.logs import get_logger

log = get_logger(__name__)

YIELD_EVERY = 50
OnList = Callable[[list[dict[str, Any]]], None]
OnEvent = Callable[[str, dict[str, Any]], None]


class Watch:
    def __init__(self, *, api: KubeApi, path: str, selector: str, on_list: OnList,
                 on_event: OnEvent, page_size: int = 1000,
                 watch_seconds: tuple[int, int] = (240, 360)) -> None:
        self._api = api
        self.path = path
        self._selector = selector
        self._on_list = on_list
        self._on_event = on_event
        self._page_size = page_size
        self._watch_seconds = watch_seconds
        self.synced = asyncio.Event()

    async def run(self) -> None:
        failures = 0
        while True:
            try:
                version = await self._list()
                failures = 0
                while True:  # a clean end of a watch resumes from the last version
                    version = await self._watch(version)
            except KubeError as exc:
                failures += 1
                delay = random.uniform(0.1, min(10.0, 0.2 * 2 ** failures))  # noqa: S311
                level = log.info if exc.code == 410 else log.warning
                level("watch restarting with a fresh list", path=self.path, error=str(exc),
                      seconds=round(delay, 2))
                await asyncio.sleep(delay)

    async def _list(self) -> str:
        items: list[dict[str, Any]] = []
        token = ""
        while True:
            query = {"labelSelector": self._selector, "limit": str(self._page_size)}
            if token:
                query["continue"] = token
            page = await self._api.request("GET", self.path, query=query)
            items.extend(page.get("items") or [])
            metadata = page.get("metadata") or {}
            token = str(metadata.get("continue") or "")
            if not token:
                break
        self._on_list(items)
        self.synced.set()
        return str(metadata.get("resourceVersion") or "")

    async def _watch(self, version: str) -> str:
        seconds = random.randint(*self._watch_seconds)  # noqa: S311  # spread reconnects
        query = {"labelSelector": self._selector, "resourceVersion": version,
                 "allowWatchBookmarks": "true", "timeoutSeconds": str(seconds)}
        handled = 0
        async for event in self._api.watch(self.path, query=query, idle_timeout=seconds + 30):
            handled += 1
            if handled % YIELD_EVERY == 0:
                # A burst of buffered events is read without ever waiting; let RPCs in.
                await asyncio.sleep(0)
            kind = str(event.get("type"))
            obj = event.get("object")
            if not isinstance(obj, dict):
                continue
            version = str((obj.get("metadata") or {}).get("resourceVersion") or version)
            if kind in ("ADDED", "MODIFIED", "DELETED"):
                self._on_event(kind, obj)
        return version
