from __future__ import annotations

from typing import Any

import pytest

from simkube.core.kubeapi import Discovery
from simkube.tracer.owners import OwnerResolver, controller_of
from tests.unit.tracer.conftest import obj, ref
from tests.unit.tracer.fakes import FakeApi

pytestmark = pytest.mark.unit


def owned(kind: str, name: str, owner_kind: str, owner: str, uid: str) -> dict[str, Any]:
    api_version, _, kind_name = owner_kind.rpartition(".")
    return obj(kind, name, metadata={"uid": f"uid-{name}", "ownerReferences": [
        {"apiVersion": api_version, "kind": kind_name, "name": owner, "uid": uid,
         "controller": True}]})


def resolver(api: FakeApi) -> OwnerResolver:
    return OwnerResolver(api, Discovery(api), cache_size=10)  # type: ignore[arg-type]


async def test_chains_are_followed_and_cached_per_owner() -> None:
    api = FakeApi()
    api.objects["/apis/apps/v1/namespaces/ns/replicasets/web-1"] = owned(
        "apps/v1.ReplicaSet", "web-1", "apps/v1.Deployment", "web", "uid-web")
    api.objects["/apis/apps/v1/namespaces/ns/deployments/web"] = obj(
        "apps/v1.Deployment", "web", metadata={"uid": "uid-web"})
    owners = resolver(api)
    for pod in ("a", "b", "c"):
        chain = await owners.ancestors(owned("v1.Pod", pod, "apps/v1.ReplicaSet", "web-1",
                                             "uid-web-1"))
        assert chain == (ref("apps/v1.ReplicaSet", "web-1"), ref("apps/v1.Deployment", "web"))
    assert owners.lookups == 2  # one per owner, not per pod


async def test_missing_or_replaced_owners_end_the_chain() -> None:
    api = FakeApi()
    owners = resolver(api)
    chain = await owners.ancestors(owned("v1.Pod", "a", "apps/v1.ReplicaSet", "gone", "u1"))
    assert chain == (ref("apps/v1.ReplicaSet", "gone"),)
    api.objects["/apis/apps/v1/namespaces/ns/replicasets/new"] = owned(
        "apps/v1.ReplicaSet", "new", "apps/v1.Deployment", "web", "uid-web")
    chain = await owners.ancestors(owned("v1.Pod", "b", "apps/v1.ReplicaSet", "new", "stale"))
    assert chain == (ref("apps/v1.ReplicaSet", "new"),)  # a different object of that name
    chain = await owners.ancestors(owned("v1.Pod", "c", "example.com/v1.Thing", "t", "u3"))
    assert chain == (ref("example.com/v1.Thing", "t"),)  # a kind the server does not serve


def test_controller_reference_is_preferred() -> None:
    plain = {"apiVersion": "v1", "kind": "ConfigMap", "name": "a"}
    boss = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "b", "controller": True}
    assert controller_of({"metadata": {"ownerReferences": [plain, boss]}}) == boss
    assert controller_of({"metadata": {"ownerReferences": [plain]}}) == plain
    assert controller_of({"metadata": {"ownerReferences": [{"kind": "X"}]}}) is None
    assert controller_of({}) is None
