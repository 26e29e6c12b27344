"""The CRD applied when missing or older, left alone when newer, waited for until Established."""

from __future__ import annotations

from typing import Any, cast

import pytest

from simkube.core.errors import EnvironmentStateError
from simkube.core.kubeapi import ApiError, KubeClient
from simkube.ctrl.crd import REVISION_LABEL, crd_manifest, ensure_crd, revision
from simkube.ctrl.names import CRD_NAME, CRDS_PATH
from tests.support.fake_api import FakeApi

pytestmark = pytest.mark.unit
PATH = f"{CRDS_PATH}/{CRD_NAME}"


def crd(rev: int, *, established: bool = True) -> dict[str, Any]:
    return {"metadata": {"name": CRD_NAME, "labels": {REVISION_LABEL: str(rev)}},
            "status": {"conditions": [{"type": "Established",
                                       "status": "True" if established else "False"}]}}


def test_the_shipped_crd_is_the_simulation_crd() -> None:
    manifest = crd_manifest()
    assert manifest["metadata"]["name"] == CRD_NAME
    assert revision(manifest) >= 1
    assert revision({"metadata": {"labels": {REVISION_LABEL: "x"}}}) == 0
    assert revision({}) == 0


async def test_a_missing_crd_is_applied_and_awaited() -> None:
    api = FakeApi(objects={PATH: crd(revision(crd_manifest()))})
    api.fail("GET", PATH, ApiError(code=404, reason="NotFound", message="absent"))
    assert await ensure_crd(cast(KubeClient, api)) is True
    (applied,) = api.sent("PATCH", PATH)
    assert applied == crd_manifest()


async def test_a_newer_crd_is_left_alone() -> None:
    api = FakeApi(objects={PATH: crd(revision(crd_manifest()) + 1)})
    assert await ensure_crd(cast(KubeClient, api)) is False
    assert api.sent("PATCH") == []


async def test_an_older_crd_is_upgraded() -> None:
    api = FakeApi(objects={PATH: crd(0)})
    assert await ensure_crd(cast(KubeClient, api)) is True
    assert len(api.sent("PATCH", PATH)) == 1


async def test_a_crd_never_established_is_an_error() -> None:
    api = FakeApi(objects={PATH: crd(revision(crd_manifest()), established=False)})
    with pytest.raises(EnvironmentStateError, match="not Established"):
        await ensure_crd(cast(KubeClient, api), timeout=0.05)


async def test_other_refusals_are_raised() -> None:
    api = FakeApi()
    api.fail("GET", PATH, ApiError(code=403, reason="Forbidden", message="rbac"))
    with pytest.raises(ApiError, match="rbac"):
        await ensure_crd(cast(KubeClient, api))
