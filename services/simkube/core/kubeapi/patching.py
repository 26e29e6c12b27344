"""Writing objects: server-side apply, merge and JSON patches, deletes that may find nothing.

The three patch types answer three different needs and are easy to mix up by content type
alone: server-side apply (the driver, manifests we own whole) names a field manager and
forces ownership; a merge patch changes a few fields (annotations, status); a JSON patch can
carry a ``test`` operation, which makes a read-modify-write safe without a resourceVersion
(the cloud provider's replica changes). Deleting something already gone is usually fine, so
``delete`` says whether it found anything instead of raising on 404.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from simkube.core.kubeapi.client import APPLY_PATCH, JSON_PATCH, MERGE_PATCH, KubeClient
from simkube.core.kubeapi.errors import ApiError
from simkube.core.kubeapi.resources import NAMESPACES
from simkube.core.kubeapi.retrying import poll

Object = dict[str, Any]


async def apply(kube: KubeClient, path: str, body: Mapping[str, Any], *, field_manager: str,
                force: bool = True, dry_run: bool = False) -> Object:
    """Server-side apply ``body`` at ``path`` (the object's own URL) as ``field_manager``;
    ``dry_run``: the server checks and answers with the result but stores nothing."""
    query = {"fieldManager": field_manager}
    if force:
        query["force"] = "true"
    if dry_run:
        query["dryRun"] = "All"
    return await kube.request("PATCH", path, body=body, query=query, content_type=APPLY_PATCH)


async def merge_patch(kube: KubeClient, path: str, patch: Mapping[str, Any], *,
                      field_manager: str | None = None) -> Object:
    """RFC 7386: the fields of ``patch`` replace the object's, ``None`` removes one."""
    query = {"fieldManager": field_manager} if field_manager else None
    return await kube.request("PATCH", path, body=patch, query=query, content_type=MERGE_PATCH)


async def json_patch(kube: KubeClient, path: str,
                     operations: Sequence[Mapping[str, Any]]) -> Object:
    """RFC 6902 operations; a failed ``test`` is refused (422) and changes nothing."""
    return await kube.request("PATCH", path, body=list(operations), content_type=JSON_PATCH)


async def delete(kube: KubeClient, path: str) -> bool:
    """Delete the object at ``path``; False if it was already gone (404)."""
    try:
        await kube.request("DELETE", path)
    except ApiError as exc:
        if exc.code != 404:
            raise
        return False
    return True


async def delete_namespace(kube: KubeClient, name: str, *, timeout: float) -> None:
    """Delete namespace ``name`` and wait until it is gone (its pods' capacity is free again);
    ``TimeoutError`` naming it otherwise."""
    path = NAMESPACES.path(name=name)
    await kube.request("DELETE", path)

    async def gone() -> bool:
        return not await kube.exists(path)
    if not await poll(gone, timeout=timeout, interval=0.3):
        raise TimeoutError(f"namespace {name} was not deleted within {timeout:.0f}s")
