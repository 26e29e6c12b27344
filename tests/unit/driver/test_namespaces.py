from __future__ import annotations

import asyncio

import pytest

from simkube.core.kubeapi import ApiError
from simkube.driver.errors import SimulationConflictError
from simkube.driver.namespaces import Namespaces, check_free
from simkube.driver.rewriting import RootRef
from tests.unit.driver.fakes import Call, FakeKube, not_found

pytestmark = pytest.mark.unit
ROOT = RootRef(name="sim", uid="uid-1")


async def test_created_once_for_concurrent_callers() -> None:
    kube = FakeKube(delay=0.01)
    namespaces = Namespaces(kube, root=ROOT, simulation="sim")  # type: ignore[arg-type]
    await asyncio.gather(*(namespaces.ensure("virtual-a") for _ in range(10)))
    posts = kube.made("POST")
    assert len(posts) == 2  # the namespace, then its default ServiceAccount
    metadata = posts[0].body["metadata"]
    assert metadata["name"] == "virtual-a"
    assert metadata["ownerReferences"][0]["uid"] == "uid-1"
    assert posts[1].path == "/api/v1/namespaces/virtual-a/serviceaccounts"
    assert posts[1].body["metadata"] == {"name": "default", "namespace": "virtual-a"}
    namespaces.forget("virtual-a")
    await namespaces.ensure("virtual-a")
    assert len(kube.made("POST")) == 4


async def test_an_existing_namespace_must_be_ours() -> None:
    owner = {"metadata": {"ownerReferences": [{"uid": "uid-1"}]}}

    def answer(call: Call) -> object:
        if call.method == "POST":
            return ApiError(code=409, reason="AlreadyExists", message="exists")
        return owner
    namespaces = Namespaces(FakeKube(answer=answer), root=ROOT, simulation="s")  # type: ignore[arg-type]
    await namespaces.ensure("virtual-a")
    owner["metadata"]["ownerReferences"] = [{"uid": "someone-else"}]
    with pytest.raises(ApiError, match="does not belong to this simulation") as caught:
        await namespaces.ensure("virtual-b")
    assert not caught.value.transient


async def test_a_failed_creation_is_tried_again() -> None:
    failures = [ApiError(code=503, reason="Unavailable", message="")]
    kube = FakeKube(answer=lambda call: failures.pop() if failures else {})
    namespaces = Namespaces(kube, root=ROOT, simulation="s")  # type: ignore[arg-type]
    with pytest.raises(ApiError):
        await namespaces.ensure("virtual-a")
    await namespaces.ensure("virtual-a")


async def test_check_free_names_taken_namespaces() -> None:
    taken = {"/api/v1/namespaces/v-b", "/api/v1/namespaces/v-c"}
    kube = FakeKube(answer=lambda call: {} if call.path in taken else not_found(call))
    await check_free(kube, ["v-a"])  # type: ignore[arg-type]
    with pytest.raises(SimulationConflictError, match=r"v-b already exists \(and 1 more\)"):
        await check_free(kube, ["v-a", "v-b", "v-c"])  # type: ignore[arg-type]
