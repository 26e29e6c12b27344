"""The reconciler carrying out decisions against the fake API and driver: finalizer, Pending,
an invalid spec, Blocked behind the holder, a start and the slot released after it, a
delete of a run this process never followed, and a failed pass counted and retried."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from simkube.core.kubeapi import ApiError
from simkube.ctrl.names import LEASE_NAME
from simkube.ctrl.reconciling import Reconciler
from simkube.simulation.names import FINALIZER, simulation_path
from tests.support.fake_api import FakeApi
from tests.unit.ctrl.fakes import (
    SUCCEEDED,
    FakeDriver,
    counter,
    deps,
    events,
    progress,
    simulation,
    status_writes,
)

pytestmark = pytest.mark.unit
LEASE = f"/apis/coordination.k8s.io/v1/namespaces/simkube-system/leases/{LEASE_NAME}"


def with_finalizer(sim: dict[str, Any], **meta: Any) -> dict[str, Any]:
    sim["metadata"].update(finalizers=[FINALIZER], **meta)
    return sim


def reconciler(tmp_path: Path, holder: str | None = None,
               driver: FakeDriver | None = None) -> tuple[FakeApi, Reconciler]:
    spec = {"holderIdentity": holder} if holder else {}
    api = FakeApi(objects={LEASE: {"metadata": {"name": LEASE_NAME}, "spec": spec}})
    return api, Reconciler(deps=deps(api, driver or FakeDriver(), tmp_path))


def holder(api: FakeApi) -> str | None:
    return api.objects[LEASE]["spec"].get("holderIdentity")


async def test_a_new_simulation_gets_the_finalizer(tmp_path: Path) -> None:
    api, rec = reconciler(tmp_path)
    rec.replace([simulation()])
    await rec.reconcile()
    assert api.sent("PATCH", simulation_path("shop")) == [
        {"metadata": {"finalizers": [FINALIZER], "resourceVersion": "7"}}]


async def test_then_it_is_pending(tmp_path: Path) -> None:
    api, rec = reconciler(tmp_path)
    rec.apply("ADDED", with_finalizer(simulation()))
    await rec.reconcile()
    assert status_writes(api)[-1]["state"] == "Pending"
    assert events(api) == [("Normal", "Pending", "accepted; waiting for the simulation slot")]


async def test_an_invalid_spec_fails_at_once(tmp_path: Path) -> None:
    api, rec = reconciler(tmp_path)
    rec.apply("ADDED", with_finalizer(simulation(spec={"speed": -1})))
    await rec.reconcile()
    written = status_writes(api)[-1]
    assert written["state"] == "Failed"
    assert "speed" in written["message"]
    assert events(api)[-1][:2] == ("Warning", "InvalidSpec")


async def test_one_waits_blocked_behind_the_holder(tmp_path: Path) -> None:
    api, rec = reconciler(tmp_path, holder="first")
    first = with_finalizer(simulation("first", status={"state": "Running"}),
                           creationTimestamp="2026-11-25T07:00:00Z")
    second = with_finalizer(simulation("second", status={"state": "Pending"}),
                            creationTimestamp="2026-11-25T06:00:00Z")
    rec.replace([first, second])
    await rec.reconcile()
    blocked = status_writes(api, "second")[-1]
    assert (blocked["state"], blocked["message"]) == (
        "Blocked", "waiting for simulation first to finish (one runs at a time)")
    assert rec.active is not None
    assert rec.active.name == "first"
    await rec.shutdown()


async def test_a_started_simulation_releases_the_slot_when_it_ends(tmp_path: Path) -> None:
    driver = FakeDriver()
    driver.script("shop-r1", progress("shop-r1", SUCCEEDED, applied=10))
    api, rec = reconciler(tmp_path, driver=driver)
    rec.apply("ADDED", with_finalizer(simulation(status={"state": "Pending"})))
    await rec.reconcile()
    assert holder(api) == "shop"
    active = rec.active
    assert active is not None
    for _ in range(300):
        if active.done:
            break
        await asyncio.sleep(0.01)
    assert active.ctx.writer.status["state"] == "Finished"
    await rec.reconcile()
    assert rec.active is None
    assert holder(api) is None
    await rec.reconcile()  # the stale copy (still Pending) is not started again
    assert [name for name, _ in driver.started] == ["shop-r1"]


async def test_a_newer_copy_reaches_the_active_run(tmp_path: Path) -> None:
    _api, rec = reconciler(tmp_path)
    rec.apply("ADDED", with_finalizer(simulation(status={"state": "Pending"})))
    await rec.reconcile()
    assert rec.active is not None
    newer = with_finalizer(simulation(spec={"pausedTime": "2026-11-25T07:00:00Z"},
                                      status={"state": "Running"}))
    rec.apply("MODIFIED", newer)
    assert rec.active.simulation is newer
    await rec.shutdown()


async def test_deleting_a_run_this_process_never_followed(tmp_path: Path) -> None:
    driver = FakeDriver()
    driver.known["shop-r2"] = progress("shop-r2")
    api, rec = reconciler(tmp_path, holder="shop", driver=driver)
    deleted = with_finalizer(simulation(status={"state": "Running", "currentRun": 2}),
                             deletionTimestamp="2026-11-25T08:00:00Z")
    rec.apply("MODIFIED", deleted)
    await rec.reconcile()
    assert driver.called("cancel") == ["shop-r2"]
    assert holder(api) is None
    assert api.sent("PATCH", simulation_path("shop"))[-1]["metadata"]["finalizers"] == []


async def test_a_failed_pass_is_counted_and_tried_again(tmp_path: Path) -> None:
    api, rec = reconciler(tmp_path)
    api.fail("GET", LEASE, ApiError(code=500, reason="InternalError", message="etcd"))
    rec.replace([simulation()])
    loop = asyncio.create_task(rec.run())
    for _ in range(300):
        if api.sent("PATCH", simulation_path("shop")):
            break
        await asyncio.sleep(0.01)
    loop.cancel()
    await asyncio.gather(loop, return_exceptions=True)
    assert counter(rec.deps.metrics, "simkube_ctrl_reconcile_errors_total") == 1
    assert api.sent("PATCH", simulation_path("shop"))  # the next pass went through
