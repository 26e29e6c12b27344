"""Which REST path serves a kind, and whether it is namespaced: asked of the cluster, cached.

Traces may hold any kind (custom resources included), so the driver cannot carry a table of
resources; it reads the API server's discovery documents per group/version, once. A kind the
cluster does not serve yet (its CRD may be created by the same trace a moment earlier) is
looked up again, at most once a second per group/version, and reported as a transient
error so the applier retries it instead of failing at once.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from simkube.core.kubeapi import ApiError, KubeClient

REFRESH_INTERVAL = 1.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Resource:
    base: str  # "/apis/apps/v1" or "/api/v1"
    plural: str
    namespaced: bool

    def collection(self, *, namespace: str = "") -> str:
        if self.namespaced:
            return f"{self.base}/namespaces/{namespace}/{self.plural}"
        return f"{self.base}/{self.plural}"

    def item(self, *, name: str, namespace: str = "") -> str:
        return f"{self.collection(namespace=namespace)}/{name}"


def api_base(api_version: str) -> str:
    return f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"


class Discovery:
    def __init__(self, kube: KubeClient) -> None:
        self._kube = kube
        self._kinds: dict[str, dict[str, Resource]] = {}
        self._fetched_at: dict[str, float] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def resource(self, *, api_version: str, kind: str) -> Resource:
        """The resource serving ``kind``; ``ApiError`` (404, transient) if none does (yet)."""
        known = self._kinds.get(api_version, {}).get(kind)
        if known is not None:
            return known
        lock = self._locks.setdefault(api_version, asyncio.Lock())
        async with lock:
            loop = asyncio.get_running_loop()
            if (kind not in self._kinds.get(api_version, {})
                    and loop.time() - self._fetched_at.get(api_version, -1e9) >= REFRESH_INTERVAL):
                self._fetched_at[api_version] = loop.time()
                self._kinds[api_version] = await self._fetch(api_version)
        known = self._kinds.get(api_version, {}).get(kind)
        if known is None:
            raise ApiError(code=404, reason="KindNotServed", retry=True,
                           message=f"the simulated cluster does not serve {api_version} {kind} "
                                   "(is its CustomResourceDefinition installed?)")
        return known

    async def _fetch(self, api_version: str) -> dict[str, Resource]:
        base = api_base(api_version)
        try:
            document = await self._kube.request("GET", base)
        except ApiError as exc:
            if exc.code == 404:
                return {}
            raise
        kinds: dict[str, Resource] = {}
        for entry in document.get("resources") or []:
            name = entry.get("name", "")
            if "/" in name or not entry.get("kind"):  # subresources such as deployments/scale
                continue
            kinds[entry["kind"]] = Resource(base=base, plural=name,
                                            namespaced=bool(entry.get("namespaced")))
        return kinds
