"""A scripted stand-in for the API server (the client itself is tested over real HTTP with
``tests.support.serving``).

``ScriptedKube`` has ``KubeClient``'s ``request`` and ``watch`` without a network: lists are
served in pages of what it holds, each watch plays the next script (events, or an
``ApiError`` to raise), and every call is recorded.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from simkube.core.kubeapi import ApiError, KubeClient

Object = dict[str, Any]


def event(kind: str, name: str, version: str) -> Object:
    return {"type": kind, "object": {"metadata": {"name": name, "resourceVersion": version}}}


@dataclass
class ScriptedKube:
    pages: list[list[Object]] = field(default_factory=lambda: [[]])
    watches: list[list[Object] | ApiError] = field(default_factory=list)
    list_errors: list[ApiError] = field(default_factory=list)
    lists: int = 0
    requests: list[tuple[str, str, Any, Mapping[str, str] | None, str | None]] = field(
        default_factory=list)
    watch_queries: list[Mapping[str, str]] = field(default_factory=list)
    idle_timeouts: list[float | None] = field(default_factory=list)
    answer: Any = None

    async def request(self, method: str, path: str, *, body: Any = None,
                      query: Mapping[str, str] | None = None, content_type: str | None = None,
                      **_: Any) -> Object:
        self.requests.append((method, path, body, query, content_type))
        if method != "GET" or self.answer is not None:
            result = self.answer(method, path) if callable(self.answer) else {}
            if isinstance(result, ApiError):
                raise result
            return dict(result or {})
        if self.list_errors:
            raise self.list_errors.pop(0)
        index = int((query or {}).get("continue") or 0)
        if index == 0:
            self.lists += 1
        metadata = {"resourceVersion": f"{self.lists}0"}
        if index + 1 < len(self.pages):
            metadata["continue"] = str(index + 1)
        return {"items": [dict(item) for item in self.pages[index]], "metadata": metadata}

    async def exists(self, path: str) -> bool:
        return await KubeClient.exists(self, path)  # type: ignore[arg-type]  # the real logic

    async def watch(self, path: str, *, query: Mapping[str, str],
                    idle_timeout: float | None = None) -> AsyncIterator[Object]:
        self.watch_queries.append(dict(query))
        self.idle_timeouts.append(idle_timeout)
        script = self.watches.pop(0) if self.watches else None
        if script is None:
            await asyncio.Event().wait()  # an idle watch: blocks until cancelled
            return
        if isinstance(script, ApiError):
            raise script
        for item in script:
            yield item
