from __future__ import annotations

from typing import Any, cast

import pytest

from simkube.core.kubeapi import (
    APPLY_PATCH,
    JSON_PATCH,
    MERGE_PATCH,
    ApiError,
    KubeClient,
    apply,
    delete,
    delete_namespace,
    json_patch,
    merge_patch,
)
from tests.unit.core.kubeapi.fakes import ScriptedKube

pytestmark = pytest.mark.unit
CM = "/api/v1/namespaces/a/configmaps/c"


async def test_apply_is_a_forced_server_side_apply() -> None:
    kube = ScriptedKube(answer=lambda method, path: {"kind": "ConfigMap"})
    assert await apply(cast(KubeClient, kube), CM, {"metadata": {"name": "c"}},
                       field_manager="m") == {"kind": "ConfigMap"}
    await apply(cast(KubeClient, kube), CM, {}, field_manager="m", force=False)
    (_, path, body, query, content_type), second = kube.requests
    assert (path, body, content_type) == (CM, {"metadata": {"name": "c"}}, APPLY_PATCH)
    assert query == {"fieldManager": "m", "force": "true"}
    assert second[3] == {"fieldManager": "m"}


async def test_merge_and_json_patches_carry_their_content_types() -> None:
    kube = ScriptedKube(answer=lambda method, path: {})
    await merge_patch(cast(KubeClient, kube), CM, {"data": {"a": None}})
    await merge_patch(cast(KubeClient, kube), CM, {"data": {}}, field_manager="m")
    operations = [{"op": "test", "path": "/spec/replicas", "value": 1}]
    await json_patch(cast(KubeClient, kube), CM, operations)
    assert [(r[0], r[3], r[4]) for r in kube.requests] == [
        ("PATCH", None, MERGE_PATCH), ("PATCH", {"fieldManager": "m"}, MERGE_PATCH),
        ("PATCH", None, JSON_PATCH)]
    assert kube.requests[2][2] == operations


async def test_delete_says_whether_it_found_anything() -> None:
    def answer(method: str, path: str) -> Any:
        if path.endswith("/gone"):
            return ApiError(code=404, reason="NotFound", message="")
        if path.endswith("/refused"):
            return ApiError(code=403, reason="Forbidden", message="")
        return {}
    kube = cast(KubeClient, ScriptedKube(answer=answer))
    assert await delete(kube, "/api/v1/nodes/here")
    assert not await delete(kube, "/api/v1/nodes/gone")
    with pytest.raises(ApiError):
        await delete(kube, "/api/v1/nodes/refused")


async def test_delete_namespace_waits_until_it_is_gone() -> None:
    remaining = [True, True, False]

    def answer(method: str, path: str) -> Any:
        if method == "GET" and not remaining.pop(0):
            return ApiError(code=404, reason="NotFound", message="")
        return {}
    kube = ScriptedKube(answer=answer)
    kube_client = cast(KubeClient, kube)
    await delete_namespace(kube_client, "ns", timeout=5)
    assert [r[0] for r in kube.requests] == ["DELETE", "GET", "GET", "GET"]
    remaining[:] = [True] * 100
    with pytest.raises(TimeoutError, match="namespace ns"):
        await delete_namespace(kube_client, "ns", timeout=0.1)
