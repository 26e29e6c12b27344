"""Which URL serves a kind, and whether it is installed at all.

Any kind can be tracked, so nothing about resources is hard-coded: the API server's discovery
documents (``/api/v1``, ``/apis/<group>/<version>``) say each kind's plural name, whether it
is namespaced and whether it can be listed and watched. A kind whose group/version or kind is
absent is ``NotInstalledError`` (its CRD may come later; the watcher retries); answers are cached
until a watch reports the resource gone.
"""

from __future__ import annotations

from dataclasses import dataclass

from simkube.core.kubeapi import ApiError, KubeClient
from simkube.tracer.kinds import KindKey


class NotInstalledError(Exception):
    """The API server does not serve this kind (yet)."""


class NotWatchableError(Exception):
    """The kind exists but cannot be listed and watched."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Resource:
    kind: KindKey
    plural: str
    namespaced: bool

    def path(self, *, namespace: str = "", name: str = "") -> str:
        """The collection (or, with ``name``, the object) URL, in ``namespace`` if given."""
        base = self.kind.api_prefix
        if namespace and self.namespaced:
            base = f"{base}/namespaces/{namespace}"
        base = f"{base}/{self.plural}"
        return f"{base}/{name}" if name else base


class Discovery:
    def __init__(self, api: KubeClient) -> None:
        self._api = api
        self._known: dict[KindKey, Resource] = {}

    async def resource(self, kind: KindKey) -> Resource:
        known = self._known.get(kind)
        if known is not None:
            return known
        try:
            document = await self._api.request("GET", kind.api_prefix)
        except ApiError as exc:
            if exc.code == 404:
                raise NotInstalledError(f"the API server does not serve {kind.api_version} "
                                   f"(is the CRD for {kind.kind} installed?)") from None
            raise
        for entry in document.get("resources") or []:
            if (isinstance(entry, dict) and entry.get("kind") == kind.kind
                    and "/" not in str(entry.get("name", ""))):
                verbs = set(entry.get("verbs") or [])
                if not {"list", "watch"} <= verbs:
                    raise NotWatchableError(f"{kind} cannot be listed and watched (verbs: "
                                       f"{sorted(verbs)})")
                resource = Resource(kind=kind, plural=str(entry["name"]),
                                    namespaced=bool(entry.get("namespaced")))
                self._known[kind] = resource
                return resource
        raise NotInstalledError(f"{kind.api_version} has no kind {kind.kind} "
                                "(is its CRD installed?)")

    def forget(self, kind: KindKey) -> None:
        """Look the kind up again next time (its CRD was deleted or changed)."""
        self._known.pop(kind, None)
