"""List, then watch from the list's resourceVersion; re-list when the watch cannot resume.

The trackers keep state per object (a node's group, a pod's times), so a re-list replaces
their view instead of adding to it: nothing is counted twice. A watch that ends cleanly (its
server-side timeout) resumes from the last resourceVersion seen (bookmarks keep it fresh); a
``410 Gone`` (etcd compacted past it, as a status or as an ERROR event) re-lists; any other
failure backs off, then re-lists, because events may have been missed.

An ``optional`` watch is of a kind that may not exist: Karpenter's NodeClaims are there only
when Karpenter's CRDs are installed, and may not be readable by an sk-ctrl whose role
predates them. A 404 or 403 makes it ``absent`` — an empty list, then no watching — instead of
failing the recorder.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Any

from simkube.core.kubeapi import ApiError, KubeClient
from simkube.core.logs import get_logger

log = get_logger(__name__)

PAGE_SIZE = 500
ABSENT_CODES = frozenset({403, 404})
WATCH_SECONDS = (240, 300)
MAX_BACKOFF = 10.0
Object = dict[str, Any]


class GoneError(Exception):
    """The watch's resourceVersion is too old."""


class ListWatch:
    def __init__(self, *, kube: KubeClient, path: str, what: str,
                 on_list: Callable[[list[Object]], None],
                 on_event: Callable[[str, Object], None],
                 query: dict[str, str] | None = None, page_size: int = PAGE_SIZE,
                 watch_seconds: tuple[int, int] = WATCH_SECONDS,
                 optional: bool = False) -> None:
        self._kube = kube
        self._path = path
        self._what = what
        self._on_list = on_list
        self._on_event = on_event
        self._query = dict(query or {})
        self._page_size = page_size
        self._watch_seconds = watch_seconds
        self._optional = optional
        self.lists = 0
        self.version = ""
        self.absent = False

    @property
    def what(self) -> str:
        return self._what

    async def list(self) -> None:
        """One complete list, handed over at once; remembers its resourceVersion."""
        items: list[Object] = []
        token = ""
        while True:
            query = {**self._query, "limit": str(self._page_size)}
            if token:
                query["continue"] = token
            try:
                page = await self._kube.request("GET", self._path, query=query)
            except ApiError as exc:
                if not (self._optional and exc.code in ABSENT_CODES):
                    raise
                log.info("not watched: the API has none or refuses", what=self._what,
                         code=exc.code)
                self.absent = True
                self._on_list([])
                return
            items.extend(item for item in page.get("items") or [] if isinstance(item, dict))
            metadata = page.get("metadata") or {}
            token = str(metadata.get("continue") or "")
            if not token:
                break
        self.version = str(metadata.get("resourceVersion") or "")
        self.lists += 1
        self._on_list(items)

    async def run(self) -> None:
        """Watch until cancelled; call after a first ``list()``."""
        loop = asyncio.get_running_loop()
        delay = 0.5
        while True:
            try:
                if not self.version:
                    await self.list()
                if self.absent:
                    return
                started = loop.time()
                await self._watch()  # a clean end: resume from the last version
                delay = 0.5
                if loop.time() - started < 1:  # closed at once: do not spin
                    await asyncio.sleep(1)
            except GoneError:
                log.info("resourceVersion expired; re-listing", what=self._what)
                self.version = ""
            except ApiError as exc:
                self.version = ""
                if exc.code == 410:
                    log.info("resourceVersion expired; re-listing", what=self._what)
                    continue
                log.warning("watch or list failed; re-listing", what=self._what,
                            error=str(exc), seconds=delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, MAX_BACKOFF)

    async def _watch(self) -> None:
        if not self.version:
            raise GoneError
        seconds = random.randint(*self._watch_seconds)  # noqa: S311  # spread reconnects
        query = {**self._query, "resourceVersion": self.version, "allowWatchBookmarks": "true",
                 "timeoutSeconds": str(seconds)}
        async for event in self._kube.watch(self._path, query=query):
            kind = event.get("type")
            obj = event.get("object")
            if not isinstance(obj, dict):
                continue
            if kind == "ERROR":
                if obj.get("code") == 410:
                    raise GoneError
                raise ApiError(code=int(obj.get("code") or 0),
                               reason=str(obj.get("reason") or "WatchError"),
                               message=str(obj.get("message") or ""))
            version = (obj.get("metadata") or {}).get("resourceVersion")
            if kind in ("ADDED", "MODIFIED", "DELETED"):
                self._on_event(str(kind), obj)
            if version:
                self.version = str(version)
