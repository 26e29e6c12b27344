"""An API server in memory for unit tests: lists what it holds and streams what a test sends
(the recorder's list+watch loops), answers GETs of single objects it was given, records every
request with its body, and fails the requests a test tells it to. A path it is told is absent
answers 404, as for a CRD not installed."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import AsyncIterator, Mapping
from typing import Any

from simkube.core.kubeapi import ApiError

Object = dict[str, Any]


class FakeApi:
    def __init__(self, *, lists: Mapping[str, list[Object]] | None = None,
                 objects: Mapping[str, Object] | None = None,
                 absent: tuple[str, ...] = ()) -> None:
        self._lists = {path: list(items) for path, items in (lists or {}).items()}
        self.objects: dict[str, Object] = dict(objects or {})
        self._absent = set(absent)
        self._failures: defaultdict[tuple[str, str], list[ApiError]] = defaultdict(list)
        self._streams: defaultdict[str, asyncio.Queue[Object]] = defaultdict(asyncio.Queue)
        self._watch_failures: defaultdict[str, list[ApiError]] = defaultdict(list)
        self.requests: list[tuple[str, str]] = []
        self.bodies: list[tuple[str, str, Any]] = []

    def fail(self, method: str, path: str, *errors: ApiError) -> None:
        """The next requests ``method path`` fail with ``errors``, one each, in turn."""
        self._failures[(method, path)].extend(errors)

    def fail_watch(self, path: str, *errors: ApiError) -> None:
        """The next watches of ``path`` fail with ``errors``, one each, in turn."""
        self._watch_failures[path].extend(errors)

    def sent(self, method: str, path: str | None = None) -> list[Any]:
        """The bodies of the requests ``method`` (to ``path``), oldest first."""
        return [body for m, p, body in self.bodies
                if m == method and (path is None or p == path)]

    async def request(self, method: str, path: str, *, query: Mapping[str, str] | None = None,
                      body: Any = None, **_: Any) -> Object:
        self.requests.append((method, path))
        self.bodies.append((method, path, body))
        failures = self._failures.get((method, path))
        if failures:
            raise failures.pop(0)
        if path in self._absent:
            raise ApiError(code=404, reason="NotFound",
                           message="the server could not find the requested resource")
        if method == "PUT" and path in self.objects:
            self.objects[path] = body  # a replaced object reads back as written
        if method != "GET":
            return {}
        if path in self.objects:
            return self.objects[path]
        selector = (query or {}).get("fieldSelector", "")
        labels = (query or {}).get("labelSelector", "")
        items = [item for item in self._lists.get(path, [])
                 if _selected(item, selector) and _labelled(item, labels)]
        return {"items": items, "metadata": {"resourceVersion": "1"}}

    async def exists(self, path: str) -> bool:
        try:
            await self.request("GET", path)
        except ApiError as exc:
            if exc.code == 404:
                return False
            raise
        return True

    async def watch(self, path: str, *, query: Mapping[str, str],
                    idle_timeout: float | None = None) -> AsyncIterator[Object]:
        self.requests.append(("WATCH", path))
        self.bodies.append(("WATCH", path, dict(query)))
        failures = self._watch_failures.get(path)
        if failures:
            raise failures.pop(0)
        stream = self._streams[path + (query.get("fieldSelector") or "")]
        while True:
            event = await stream.get()
            if event.get("type") == "END":  # the server ends the watch
                return
            yield event

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


def _labelled(item: Object, selector: str) -> bool:
    """``key=value`` selectors, comma-separated; the only kind sk-ctrl sends."""
    labels = (item.get("metadata") or {}).get("labels") or {}
    return all(labels.get(key) == value for key, _, value in
               (term.partition("=") for term in selector.split(",") if term))
