"""Which resource serves a kind, and whether it is served at all: asked of the cluster, cached.

Traces and tracer configs may name any kind (custom resources included), so the resource
table cannot list them all; the API server's discovery documents (``/api/v1``,
``/apis/<group>/<version>``) say each kind's plural, whether it is namespaced and which verbs
it allows. One document is read per group/version and kept. A kind it lacks (its CRD may be
created a moment later, by the same trace or by an operator) is ``KindNotServedError`` — a
404 marked transient, so a caller retries it — and its group/version is read again on the
next question, at most once per ``refresh_interval``; ``forget`` reads it again at once.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from simkube.core.errors import SimkubeError
from simkube.core.kubeapi.client import KubeClient
from simkube.core.kubeapi.errors import ApiError
from simkube.core.kubeapi.resources import Resource, group_version_path

REFRESH_INTERVAL = 1.0
WATCH_VERBS = frozenset({"list", "watch"})


class KindNotServedError(ApiError):
    """The API server does not serve this kind (yet): ``404``, reason ``KindNotServed``."""

    def __init__(self, message: str) -> None:
        super().__init__(code=404, reason="KindNotServed", message=message, retry=True)


class NotWatchableError(SimkubeError):
    """The kind is served but cannot be listed and watched."""


@dataclass(frozen=True, slots=True)
class _Served:
    resource: Resource
    verbs: frozenset[str]


class Discovery:
    def __init__(self, kube: KubeClient, *, refresh_interval: float = REFRESH_INTERVAL) -> None:
        self._kube = kube
        self._refresh_interval = refresh_interval
        self._served: dict[str, dict[str, _Served]] = {}  # api_version -> kind -> served
        self._fetched_at: dict[str, float] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def resource(self, *, api_version: str, kind: str) -> Resource:
        """The resource serving ``kind``; ``KindNotServedError`` if none does (yet)."""
        return (await self._served_kind(api_version, kind)).resource

    async def watchable(self, *, api_version: str, kind: str) -> Resource:
        """As ``resource``, and ``NotWatchableError`` unless it can be listed and watched."""
        served = await self._served_kind(api_version, kind)
        if not served.verbs >= WATCH_VERBS:
            raise NotWatchableError(f"{api_version}.{kind} cannot be listed and watched "
                                    f"(verbs: {sorted(served.verbs)})")
        return served.resource

    def forget(self, *, api_version: str, kind: str) -> None:
        """Look the kind up again next time (its CRD was deleted or changed)."""
        self._served.get(api_version, {}).pop(kind, None)
        self._fetched_at.pop(api_version, None)

    async def _served_kind(self, api_version: str, kind: str) -> _Served:
        known = self._served.get(api_version, {}).get(kind)
        if known is not None:
            return known
        lock = self._locks.setdefault(api_version, asyncio.Lock())
        async with lock:
            now = asyncio.get_running_loop().time()
            last = self._fetched_at.get(api_version)
            if (kind not in self._served.get(api_version, {})
                    and (last is None or now - last >= self._refresh_interval)):
                self._served[api_version] = await self._fetch(api_version)
                self._fetched_at[api_version] = now
        served = self._served.get(api_version, {})
        known = served.get(kind)
        if known is not None:
            return known
        if not served:
            raise KindNotServedError(f"the API server does not serve {api_version} "
                                     f"(is the CRD for {kind} installed?)")
        raise KindNotServedError(f"{api_version} has no kind {kind} (is its CRD installed?)")

    async def _fetch(self, api_version: str) -> dict[str, _Served]:
        group, _, version = api_version.rpartition("/")
        try:
            document = await self._kube.request("GET", group_version_path(api_version))
        except ApiError as exc:
            if exc.code == 404:
                return {}
            raise
        served: dict[str, _Served] = {}
        for entry in document.get("resources") or []:
            name = str(entry.get("name", "")) if isinstance(entry, dict) else ""
            if not name or "/" in name or not entry.get("kind"):  # subresources: pods/status
                continue
            resource = Resource(group=group, version=version, plural=name,
                                kind=str(entry["kind"]), namespaced=bool(entry.get("namespaced")))
            served[resource.kind] = _Served(resource, frozenset(entry.get("verbs") or ()))
        return served
