"""Stand-ins for the API server: a real HTTP server for the client, a scripted one for the rest.

``serving`` runs an aiohttp app on a loopback port, so the client is tested over real HTTP.
``ScriptedKube`` has ``KubeClient``'s ``request`` and ``watch`` without a network: lists are
served in pages of what it holds, each watch plays the next script (events, or an
``ApiError`` to raise), and every call is recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from simkube.core.kubeapi import ApiError, KubeClient

Object = dict[str, Any]


@contextlib.asynccontextmanager
async def serving(app: web.Application) -> AsyncIterator[str]:
    """Serve ``app`` on a free loopback port; yields its base URL."""
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


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
