"""The packaged CRD is the deployable one and carries the speed rule's ceiling; it is applied
when missing or older, left alone when newer, waited for until Established."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from simkube.core.errors import EnvironmentStateError
from simkube.core.kubeapi import ApiError, KubeClient
from simkube.core.simtime import MAX_SPEED
from simkube.ctrl.crd import CRD_FILE, REVISION_LABEL, crd_manifest, ensure_crd, revision
from simkube.simulation.names import CRD_NAME, CRDS_PATH
from tests.support.fake_api import FakeApi

pytestmark = pytest.mark.unit
PATH = f"{CRDS_PATH}/{CRD_NAME}"
ROOT = Path(__file__).resolve().parents[3]


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


def test_packaged_crd_equals_deployed_crd() -> None:
    assert CRD_FILE.read_bytes() == (ROOT / "deploy" / "crds" / "simulation.yaml").read_bytes()


def test_crd_shape() -> None:
    crd = crd_manifest()
    assert crd["metadata"]["name"] == "simulations.simkube.dev"
    assert revision(crd) >= 1
    names = crd["spec"]["names"]
    assert names["shortNames"] == ["sim", "sims"]
    assert names["categories"] == ["simkube"]
    assert crd["spec"]["scope"] == "Cluster"
    version = crd["spec"]["versions"][0]
    assert version["subresources"] == {"status": {}}
    columns = [c["name"] for c in version["additionalPrinterColumns"]]
    assert columns == ["State", "Run", "Runs", "Events", "Speed", "Age"]
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    assert [list(o["required"]) for o in spec["trace"]["oneOf"]] == [["path"], ["url"],
                                                                      ["tracer"]]
    assert spec["speed"]["exclusiveMinimum"] is True
    assert spec["speed"]["maximum"] == MAX_SPEED  # the schema refuses what sk-driver would
    assert (spec["repetitions"]["minimum"], spec["repetitions"]["maximum"]) == (1, 100)
    assert spec["pausedTime"]["format"] == "date-time"
