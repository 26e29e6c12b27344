"""List, then watch from the list's resourceVersion; resume, and re-list when resuming cannot.

Whoever keeps a view of the cluster in memory (the tracer's store, the cloud provider's
index, the recorder's trackers, the controller's cache) needs the same contract from the API
server: a complete list (in pages, so a 5,000-node cluster is not one huge answer) whose
resourceVersion is where the watch starts; bookmarks (``allowWatchBookmarks``) so that
version stays fresh while nothing changes; a watch that ends after a randomised
``timeoutSeconds`` (so many watchers do not reconnect together) and resumes from the last
version seen; a stream silent for longer than that (``idle_timeout``) treated as broken; and
on ``410 Gone`` (etcd compacted past the version) or any other failure, a fresh list, because
events may have been missed. ``pages``/``watch_from`` are the pieces, for loops that need
their own states; ``ListWatch`` is the whole loop, for callbacks that take a list and events.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from simkube.core.kubeapi.client import KubeClient
from simkube.core.kubeapi.errors import ApiError, GoneError
from simkube.core.kubeapi.retrying import Backoff
from simkube.core.logs import get_logger

log = get_logger(__name__)
Object = dict[str, Any]
CHANGES = ("ADDED", "MODIFIED", "DELETED")
ABSENT_CODES = frozenset({403, 404})
YIELD_EVERY = 50


async def pages(kube: KubeClient, path: str, *, query: Mapping[str, str] | None = None,
                page_size: int = 500) -> AsyncIterator[Object]:
    """Each page of a list as served (``items``, ``metadata``); the last page's
    ``metadata.resourceVersion`` is the list's."""
    token = ""
    while True:
        params = {**(query or {}), "limit": str(page_size)}
        if token:
            params["continue"] = token
        page = await kube.request("GET", path, query=params)
        yield page
        token = str((page.get("metadata") or {}).get("continue") or "")
        if not token:
            return


async def list_all(kube: KubeClient, path: str, *, query: Mapping[str, str] | None = None,
                   page_size: int = 500) -> tuple[list[Object], str]:
    """Every item of a list, and the list's resourceVersion."""
    items: list[Object] = []
    version = ""
    async for page in pages(kube, path, query=query, page_size=page_size):
        items.extend(item for item in page.get("items") or [] if isinstance(item, dict))
        version = str((page.get("metadata") or {}).get("resourceVersion") or "")
    return items, version


@dataclass(slots=True)
class Cursor:
    """Where a watch resumes: the last resourceVersion seen, bookmarks included."""

    version: str = ""


async def watch_from(kube: KubeClient, path: str, cursor: Cursor, *,
                     query: Mapping[str, str] | None = None, seconds: int = 300,
                     idle_timeout: float | None = None) -> AsyncIterator[tuple[str, Object]]:
    """``(type, object)`` for every event of one watch from ``cursor`` (BOOKMARKs too),
    moving the cursor as they come; ends when the server ends the watch after ``seconds``.
    ``GoneError`` when the version is too old."""
    params = {**(query or {}), "resourceVersion": cursor.version,
              "allowWatchBookmarks": "true", "timeoutSeconds": str(seconds)}
    async for event in kube.watch(path, query=params, idle_timeout=idle_timeout):
        obj = event.get("object")
        if not isinstance(obj, dict):
            continue
        version = (obj.get("metadata") or {}).get("resourceVersion")
        if version:
            cursor.version = str(version)
        yield str(event.get("type")), obj


class ListWatch:
    """``on_list`` gets every complete list (it replaces what was known, so deletions missed
    while disconnected are noticed), ``on_event`` each change in between; ``synced`` is set
    once the first list is delivered. An ``optional`` kind that the API has not (404) or
    will not show (403) is ``absent``: one empty list, then no watching."""

    def __init__(self, *, kube: KubeClient, path: str, what: str,
                 on_list: Callable[[list[Object]], None],
                 on_event: Callable[[str, Object], None],
                 query: Mapping[str, str] | None = None, page_size: int = 500,
                 watch_seconds: tuple[int, int] = (240, 300),
                 idle_margin: float | None = None, backoff: Backoff | None = None,
                 optional: bool = False) -> None:
        self._kube = kube
        self.path = path
        self.what = what
        self._on_list = on_list
        self._on_event = on_event
        self._query = dict(query or {})
        self._page_size = page_size
        self._watch_seconds = watch_seconds
        self._idle_margin = idle_margin
        self._backoff = backoff or Backoff(base=0.5, cap=10.0, jitter=False)
        self._optional = optional
        self.cursor = Cursor()
        self.lists = 0
        self.absent = False
        self.synced = asyncio.Event()

    @property
    def version(self) -> str:
        return self.cursor.version

    async def list(self) -> None:
        """One complete list, handed over at once; remembers its resourceVersion."""
        try:
            items, version = await list_all(self._kube, self.path, query=self._query,
                                            page_size=self._page_size)
        except ApiError as exc:
            if not (self._optional and exc.code in ABSENT_CODES):
                raise
            log.info("not watched: the API has none or refuses", what=self.what, code=exc.code)
            self.absent = True
            items = []
        else:
            self.cursor.version = version
            self.lists += 1
        self._on_list(items)
        self.synced.set()

    async def run(self) -> None:
        """List (unless ``list()`` was called) and watch until cancelled."""
        loop = asyncio.get_running_loop()
        while True:
            try:
                if not self.version:
                    await self.list()
                if self.absent:
                    return
                started = loop.time()
                await self._watch()  # a clean end: resume from the last version
                self._backoff.reset()
                if loop.time() - started < 1:  # closed at once: do not spin
                    await asyncio.sleep(1)
            except GoneError:
                log.info("resourceVersion expired; re-listing", what=self.what)
                self.cursor.version = ""
            except ApiError as exc:
                self.cursor.version = ""
                delay = self._backoff.next_delay()
                log.warning("watch or list failed; re-listing", what=self.what,
                            error=str(exc), seconds=round(delay, 2))
                await asyncio.sleep(delay)

    async def _watch(self) -> None:
        if not self.version:
            raise GoneError(code=410, reason="NoVersion", message="the list had no version")
        seconds = random.randint(*self._watch_seconds)  # noqa: S311  # spread reconnects
        idle = None if self._idle_margin is None else seconds + self._idle_margin
        handled = 0
        async for kind, obj in watch_from(self._kube, self.path, self.cursor, query=self._query,
                                          seconds=seconds, idle_timeout=idle):
            self._backoff.reset()
            if kind in CHANGES:
                self._on_event(kind, obj)
            handled += 1
            if handled % YIELD_EVERY == 0:
                # A burst of buffered events is read without ever waiting; let others in.
                await asyncio.sleep(0)
