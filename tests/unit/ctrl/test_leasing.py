"""The one simulation slot in a Lease: created when missing, taken, renewed, released, and
renewed in the background while a simulation runs."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from simkube.core.kubeapi import ApiError, KubeClient
from simkube.ctrl.leasing import LEASE_DURATION_S, SimulationLease, keep_renewed
from simkube.ctrl.names import LEASE_NAME
from tests.support.fake_api import FakeApi

pytestmark = pytest.mark.unit
LEASES = "/apis/coordination.k8s.io/v1/namespaces/simkube-system/leases"
PATH = f"{LEASES}/{LEASE_NAME}"


def lease_api(spec: dict[str, Any]) -> tuple[FakeApi, SimulationLease]:
    api = FakeApi(objects={PATH: {"metadata": {"name": LEASE_NAME, "resourceVersion": "5"},
                                  "spec": spec}})
    return api, SimulationLease(kube=cast(KubeClient, api), namespace="simkube-system")


def conflict() -> ApiError:
    return ApiError(code=409, reason="AlreadyExists", message="exists")


async def test_ensure_creates_the_namespace_and_lease_or_finds_them() -> None:
    api, lease = lease_api({})
    api.fail("POST", "/api/v1/namespaces", conflict())
    await lease.ensure()
    (created,) = api.sent("POST", LEASES)
    assert created["spec"] == {"leaseDurationSeconds": LEASE_DURATION_S}
    api.fail("POST", LEASES, ApiError(code=403, reason="Forbidden", message="rbac"))
    with pytest.raises(ApiError, match="rbac"):
        await lease.ensure()


async def test_a_missing_lease_is_created_before_it_is_read() -> None:
    api, lease = lease_api({"holderIdentity": "shop"})
    api.fail("GET", PATH, ApiError(code=404, reason="NotFound", message="absent"))
    assert await lease.holder() == "shop"
    assert ("POST", LEASES) in api.requests


async def test_acquire_counts_a_transition_and_keeps_the_version() -> None:
    api, lease = lease_api({"holderIdentity": "old", "leaseTransitions": 2})
    await lease.acquire("shop")
    (written,) = api.sent("PUT", PATH)
    assert written["metadata"]["resourceVersion"] == "5"  # a concurrent writer gets a 409
    assert written["spec"]["holderIdentity"] == "shop"
    assert written["spec"]["leaseTransitions"] == 3
    assert written["spec"]["acquireTime"] == written["spec"]["renewTime"]


async def test_renew_only_by_the_holder() -> None:
    api, lease = lease_api({"holderIdentity": "shop", "renewTime": "then"})
    assert await lease.renew("shop") is True
    assert api.sent("PUT", PATH)[0]["spec"]["renewTime"] != "then"
    assert await lease.renew("other") is False
    assert len(api.sent("PUT", PATH)) == 1


async def test_release_clears_the_holder_it_names() -> None:
    api, lease = lease_api({"holderIdentity": "shop", "acquireTime": "a", "renewTime": "r",
                            "leaseDurationSeconds": 60})
    await lease.release("other")
    assert api.sent("PUT") == []
    await lease.release("shop")
    assert api.sent("PUT", PATH)[0]["spec"] == {"leaseDurationSeconds": 60}


async def test_keep_renewed_renews_until_cancelled_through_refusals() -> None:
    api, lease = lease_api({"holderIdentity": "shop"})
    api.fail("PUT", PATH, ApiError(code=409, reason="Conflict", message="moved"))
    renewer = asyncio.create_task(keep_renewed(lease, "shop", interval=0.01))
    for _ in range(200):
        if len(api.sent("PUT", PATH)) >= 3:
            break
        await asyncio.sleep(0.01)
    renewer.cancel()
    await asyncio.gather(renewer, return_exceptions=True)
    assert len(api.sent("PUT", PATH)) >= 3  # the refused renewal did not stop it
    assert renewer.cancelled()
