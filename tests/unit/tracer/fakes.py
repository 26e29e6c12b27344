"""An in-memory stand-in for the API server calls the tracer makes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from simkube.core.kubeapi import ApiError

DISCOVERY = {
    "/api/v1": [("pods", "Pod", True), ("namespaces", "Namespace", False)],
    "/apis/apps/v1": [("deployments", "Deployment", True), ("replicasets", "ReplicaSet", True),
                      ("deployments/scale", "Scale", True)],
    "/apis/batch/v1": [("jobs", "Job", True), ("cronjobs", "CronJob", True)],
}


class FakeApi:
    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.lists: dict[str, list[list[dict[str, Any]]]] = {}  # pages per collection path
        self.watches: list[list[dict[str, Any]] | ApiError] = []
        self.calls: list[tuple[str, dict[str, str]]] = []
        self.discovery = {prefix: {"resources": [
            {"name": name, "kind": kind, "namespaced": namespaced,
             "verbs": ["get", "list", "watch"]} for name, kind, namespaced in resources]}
            for prefix, resources in DISCOVERY.items()}

    async def request(self, method: str, path: str, *, query: dict[str, str] | None = None,
                      **_: Any) -> dict[str, Any]:
        assert method == "GET"
        self.calls.append((path, dict(query or {})))
        if path in self.discovery:
            return self.discovery[path]
        if path in self.objects:
            return self.objects[path]
        if path in self.lists:
            pages = self.lists[path]
            index = int((query or {}).get("continue") or 0)
            meta = {"resourceVersion": "100"}
            if index + 1 < len(pages):
                meta["continue"] = str(index + 1)
            return {"items": [dict(item) for item in pages[index]], "metadata": meta}
        raise ApiError(code=404, reason="NotFound", message=f"GET {path}: not found")

    async def watch(self, path: str, *, query: dict[str, str],
                    idle_timeout: float | None = None) -> AsyncIterator[dict[str, Any]]:
        self.calls.append((path, {**query, "watch": "1"}))
        if not self.watches:
            await asyncio.sleep(3600)
        script = self.watches.pop(0)
        if isinstance(script, ApiError):
            raise script
        for event in script:
            yield event
