"""A scripted stand-in for ``KubeClient``: answers from a function, records every call."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from simkube.core.kubeapi import ApiError, KubeClient

APPS = {"resources": [
    {"name": "deployments", "kind": "Deployment", "namespaced": True},
    {"name": "deployments/scale", "kind": "Scale", "namespaced": True}]}
CORE = {"resources": [
    {"name": "configmaps", "kind": "ConfigMap", "namespaced": True},
    {"name": "namespaces", "kind": "Namespace", "namespaced": False},
    {"name": "nodes", "kind": "Node", "namespaced": False},
    {"name": "pods", "kind": "Pod", "namespaced": True}]}


@dataclass
class Call:
    method: str
    path: str
    body: Any = None
    query: Mapping[str, str] | None = None
    content_type: str = ""


Answer = Callable[[Call], Any]


def not_found(call: Call) -> ApiError:
    return ApiError(code=404, reason="NotFound", message=f"{call.path} not found")


@dataclass
class FakeKube:
    """``answer(call)`` returns the body, raises ``ApiError`` or returns an ``ApiError`` to raise.

    Discovery documents for ``/api/v1`` and ``/apis/apps/v1`` are answered unless ``answer``
    handles them; ``delay`` makes every request take that long.
    """

    answer: Answer = lambda call: {}
    delay: float = 0.0
    calls: list[Call] = field(default_factory=list)
    watches: list[list[dict[str, Any]]] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0

    async def request(self, method: str, path: str, *, body: Any = None,
                      query: Mapping[str, str] | None = None, content_type: str = "",
                      timeout: float = 30.0) -> dict[str, Any]:
        call = Call(method=method, path=path, body=body, query=query,
                    content_type=content_type)
        self.calls.append(call)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            if method == "GET" and path in ("/api/v1", "/apis/apps/v1"):
                result = self.answer(call) or (CORE if path == "/api/v1" else APPS)
            else:
                result = self.answer(call)
        finally:
            self.in_flight -= 1
        if isinstance(result, ApiError):
            raise result
        return dict(result or {})

    async def exists(self, path: str) -> bool:
        return await KubeClient.exists(self, path)  # type: ignore[arg-type]  # the real logic

    async def watch(self, path: str, *, query: Mapping[str, str],
                    idle_timeout: float | None = None) -> AsyncIterator[dict[str, Any]]:
        self.calls.append(Call(method="WATCH", path=path, query=query))
        events = self.watches.pop(0) if self.watches else []
        for event in events:
            if event.get("type") == "ERROR":  # as KubeClient.watch does
                raise ApiError.from_status(event.get("object") or {})
            yield event
        if not self.watches:
            await asyncio.Event().wait()  # an idle watch: blocks until cancelled

    def made(self, method: str) -> list[Call]:
        return [call for call in self.calls if call.method == method]


class FakeCluster:
    """Just enough of an API server for a whole simulation: CRD, roots, namespaces, applies."""

    def __init__(self) -> None:
        self.established = {"status": {"conditions": [{"type": "Established",
                                                        "status": "True"}]}}
        self.roots: set[str] = set()
        self.taken_namespaces: set[str] = set()
        self.statuses: list[dict[str, Any]] = []

    def __call__(self, call: Call) -> Any:
        if call.path.startswith("/apis/apiextensions.k8s.io/"):
            return self.established
        if call.path.startswith("/apis/simkube.dev/"):
            return self._root(call)
        if call.method == "GET" and call.path.startswith("/api/v1/namespaces/"):
            name = call.path.rsplit("/", 1)[1]
            return {} if name in self.taken_namespaces else not_found(call)
        return {}

    def _root(self, call: Call) -> Any:
        if call.method == "POST":
            name = call.body["metadata"]["name"]
            if name in self.roots:
                return ApiError(code=409, reason="AlreadyExists", message="exists")
            self.roots.add(name)
            return {"metadata": {"name": name, "uid": f"uid-{name}"}}
        name = call.path.split("/")[5]
        if call.path.endswith("/status"):
            self.statuses.append(call.body["status"])
            return {}
        if call.method == "DELETE":
            self.roots.discard(name)
            return {}
        return {} if name in self.roots else not_found(call)
