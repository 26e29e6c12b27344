"""List then watch one kind, forever, resuming where it left off and re-listing when it must.

Each kind has its own watcher task, so a kind whose CRD is missing (retried, shown as
``WAITING_FOR_CRD``) or whose watch keeps failing (backing off) never holds up the others.
A watch asks for bookmarks, so its resourceVersion stays fresh even when nothing changes,
and ends after a randomised timeout, after which it resumes from that resourceVersion. On
``410 GoneError`` (etcd compacted past it), on any error (the API server restarted, the
connection dropped) and at start-up, the watcher re-lists: the list's objects go through the
recorder, which records only real differences, and the end of the list tells it which live
objects are gone. Errors back off exponentially with jitter up to a cap. The pages, the
watch from a resourceVersion and the backoff are core's (``simkube.core.kubeapi``); the
loop is the tracer's own, because it streams each page into the recorder, resolves owners,
re-discovers a kind whose resource went away and reports a state per kind.
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

from simkube.core.kubeapi import (
    ApiError,
    Backoff,
    Cursor,
    Discovery,
    GoneError,
    KindNotServedError,
    KubeClient,
    NodeTypes,
    NotWatchableError,
    Resource,
    pages,
    watch_from,
)
from simkube.core.logs import get_logger
from simkube.trace import ObjectRef
from simkube.tracer.config import KindConfig
from simkube.tracer.owners import OwnerResolver, controller_of
from simkube.tracer.recorder import Listed, Observed, Recorder
from simkube.tracer.status import KindStatus, WatchState

log = get_logger(__name__)


class KindWatcher:
    def __init__(self, *, kind: KindConfig, status: KindStatus, api: KubeClient,
                 discovery: Discovery, owners: OwnerResolver, recorder: Recorder,
                 record: bool = True, resolve_owners: bool = True, page_size: int = 500,
                 watch_seconds: tuple[int, int] = (240, 360), crd_retry: float = 5.0,
                 backoff: Backoff | None = None, node_types: NodeTypes | None = None) -> None:
        self.kind = kind
        self._node_types = node_types  # pods only: their runs keep their node's type
        self.status = status
        self._api = api
        self._discovery = discovery
        self._owners = owners
        self._recorder = recorder
        self._record = record
        self._resolve_owners = resolve_owners
        self._page_size = page_size
        self._watch_seconds = watch_seconds
        self._crd_retry = crd_retry
        # 0.5 s to 1 s after the first failure, ceilings doubling to 30 s, never under 0.5 s.
        self._backoff = backoff or Backoff(base=1.0, floor=0.5, cap=30.0)

    async def run(self) -> None:
        lists = 0
        try:
            while True:
                try:
                    resource = await self._discovery.watchable(
                        api_version=self.kind.kind.api_version, kind=self.kind.kind.kind)
                except KindNotServedError as exc:
                    self._set(WatchState.WAITING_FOR_CRD, exc.message)
                    await asyncio.sleep(self._crd_retry)
                    continue
                except (ApiError, NotWatchableError) as exc:
                    await self._back_off(str(exc))
                    continue
                try:
                    if lists:
                        self.status.resyncs += 1
                    lists += 1
                    version = await self._list(resource)
                    while True:  # a clean end of a watch resumes; errors re-list
                        started = time.monotonic()
                        version = await self._watch(resource, version)
                        if time.monotonic() - started < 1:  # closed at once: do not spin
                            await asyncio.sleep(self._backoff.next_delay())
                except GoneError as exc:
                    log.info("resourceVersion expired; re-listing", kind=self.kind.kind.key,
                             error=str(exc))
                except ApiError as exc:
                    if exc.code == 404:
                        self._discovery.forget(api_version=self.kind.kind.api_version,
                                               kind=self.kind.kind.kind)
                    await self._back_off(str(exc))
        finally:
            self.status.state = WatchState.STOPPED

    def _set(self, state: WatchState, error: str | None = None) -> None:
        self.status.state = state
        if error is not None:
            self.status.last_error = error

    async def _back_off(self, error: str) -> None:
        delay = self._backoff.next_delay()
        self._set(WatchState.BACKOFF, error)
        log.warning("watch failed; backing off", kind=self.kind.kind.key, error=error,
                    seconds=round(delay, 2))
        await asyncio.sleep(delay)

    def _collection(self, resource: Resource) -> str:
        only = self.kind.namespaces
        namespace = next(iter(only)) if len(only) == 1 else ""
        return resource.path(namespace=namespace)

    def _query(self) -> dict[str, str]:
        selector = self.kind.label_selector
        return {"labelSelector": selector.text} if selector and selector.text else {}

    async def _list(self, resource: Resource) -> str:
        self._set(WatchState.LISTING)
        seen: set[ObjectRef] = set()
        version = ""
        async for page in pages(self._api, self._collection(resource), query=self._query(),
                                page_size=self._page_size):
            for obj in page.get("items") or []:
                if isinstance(obj, dict):
                    await self._observe(obj, deleted=False)
                    if (obj.get("metadata") or {}).get("name"):
                        seen.add(ObjectRef.of(obj))
            version = str((page.get("metadata") or {}).get("resourceVersion") or "")
        await self._recorder.queue.put(Listed(kind=self.kind, status=self.status,
                                              seen=frozenset(seen)))
        self.status.resource_version = version
        return version

    async def _watch(self, resource: Resource, version: str) -> str:
        seconds = random.randint(*self._watch_seconds)  # noqa: S311  # spread reconnects
        cursor = Cursor(version)
        self._set(WatchState.WATCHING)
        async for kind, obj in watch_from(self._api, self._collection(resource), cursor,
                                          query=self._query(), seconds=seconds,
                                          idle_timeout=seconds + 60):
            if kind in ("ADDED", "MODIFIED", "DELETED"):
                await self._observe(obj, deleted=kind == "DELETED")
            self.status.resource_version = cursor.version
            self._backoff.reset()
        return cursor.version

    async def _observe(self, obj: dict[str, Any], *, deleted: bool) -> None:
        # Items of a list carry no apiVersion/kind; events do. Stored objects need both.
        obj["apiVersion"] = self.kind.kind.api_version
        obj["kind"] = self.kind.kind.kind
        # A deleted object's owners may be gone already; the store keeps its known chain.
        ancestors = (await self._owners.ancestors(obj)
                     if self._resolve_owners and not deleted and controller_of(obj) else ())
        await self._recorder.queue.put(Observed(
            kind=self.kind, status=self.status, obj=obj, ancestors=ancestors,
            record=self._record, deleted=deleted, node_type=await self._node_type(obj)))

    async def _node_type(self, pod: dict[str, Any]) -> str | None:
        """The instance type of the node a started pod runs on (``None`` for other kinds)."""
        if self._node_types is None or pod.get("kind") != "Pod":
            return None
        status = pod.get("status") or {}
        if not status.get("startTime") and status.get("phase") != "Running":
            return None
        return await self._node_types.of((pod.get("spec") or {}).get("nodeName"))
