"""Owner chains: a Pod's ReplicaSet's Deployment, a Job's CronJob, with lookups cached.

Export drops objects whose owner is exported too (their controller recreates them), and pod
lifecycles belong to the owner that asked for them, so the tracer needs each object's owner
chain, including owners of kinds it does not record (a ReplicaSet between a Pod and its
Deployment). Owners are fetched from the API server at most once per uid (an owner's own
owner never changes for its lifetime) and kept in a bounded LRU, so thousands of pods of one
Deployment cost one lookup per ReplicaSet.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from simkube.core.kubeapi import (
    ApiError,
    Discovery,
    KindNotServedError,
    KubeClient,
    NotWatchableError,
)
from simkube.core.logs import get_logger
from simkube.trace import ObjectRef
from simkube.tracer.kinds import KindKey
from simkube.tracer.segments import Ancestors

log = get_logger(__name__)
MAX_DEPTH = 10
_GONE: Any = object()  # cached "this owner no longer exists"


def controller_of(obj: dict[str, Any]) -> dict[str, Any] | None:
    """The owner reference that controls ``obj`` (else its first), if any."""
    refs = (obj.get("metadata") or {}).get("ownerReferences") or []
    refs = [ref for ref in refs if isinstance(ref, dict) and ref.get("kind") and ref.get("name")
            and ref.get("apiVersion")]
    return next((ref for ref in refs if ref.get("controller")), refs[0] if refs else None)


class OwnerResolver:
    def __init__(self, api: KubeClient, discovery: Discovery, *, cache_size: int = 20_000) -> None:
        self._api = api
        self._discovery = discovery
        self._cache: OrderedDict[str, Any] = OrderedDict()  # uid -> owner's controller ref
        self._cache_size = cache_size
        self.lookups = 0

    async def ancestors(self, obj: dict[str, Any]) -> Ancestors:
        """The owner chain of ``obj``, nearest first; it stops where an owner is unknown."""
        namespace = (obj.get("metadata") or {}).get("namespace") or ""
        chain: list[ObjectRef] = []
        reference = controller_of(obj)
        while reference is not None and len(chain) < MAX_DEPTH:
            kind = KindKey.of(str(reference["apiVersion"]), str(reference["kind"]))
            owner = ObjectRef(api_version=kind.api_version, kind=kind.kind,
                              namespace=namespace, name=str(reference["name"]))
            if owner in chain:
                break
            uid = str(reference.get("uid") or "")
            parent = self._cached(uid)
            if parent is None:
                parent, owner = await self._fetch(kind, owner, uid)
            chain.append(owner)
            reference = None if parent is _GONE else parent
        return tuple(chain)

    def _cached(self, uid: str) -> Any:
        if not uid or uid not in self._cache:
            return None
        self._cache.move_to_end(uid)
        return self._cache[uid]

    async def _fetch(self, kind: KindKey, owner: ObjectRef,
                     uid: str) -> tuple[Any, ObjectRef]:
        """The owner's own controller reference (``_GONE`` if none or it does not exist)."""
        self.lookups += 1
        try:
            resource = await self._discovery.watchable(api_version=kind.api_version,
                                                       kind=kind.kind)
            namespace = owner.namespace if resource.namespaced else ""
            owner = ObjectRef(api_version=owner.api_version, kind=owner.kind,
                              namespace=namespace, name=owner.name)
            found = await self._api.request(
                "GET", resource.path(namespace=namespace, name=owner.name))
        except (KindNotServedError, NotWatchableError):
            return _GONE, owner
        except ApiError as exc:
            if exc.code != 404:
                log.debug("owner lookup failed", owner=str(owner), error=str(exc))
                return _GONE, owner  # not cached: the next event tries again
            found = None
        actual_uid = str(((found or {}).get("metadata") or {}).get("uid") or "")
        parent = _GONE if found is None or (uid and actual_uid != uid) else controller_of(found)
        if parent is None:
            parent = _GONE
        if uid:
            self._cache[uid] = parent
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return parent, owner
