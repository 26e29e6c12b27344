from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from simkube.core.errors import UnavailableError
from simkube.core.kubeapi import ApiError
from simkube.driver import roots
from simkube.driver.errors import SimulationConflictError
from simkube.driver.names import ROOT_CRD_NAME
from simkube.driver.progress import FailureRecord, Operation, ProgressSnapshot, SimulationState
from tests.unit.driver.fakes import Call, FakeKube, not_found

pytestmark = pytest.mark.unit
REPO = Path(__file__).resolve().parents[3]
ESTABLISHED = {"status": {"conditions": [{"type": "Established", "status": "True"}]}}


def test_the_shipped_crd_is_the_one_the_driver_installs() -> None:
    shipped = yaml.safe_load((REPO / "deploy" / "crds" / "simulationroot.yaml").read_text())
    assert shipped == roots.crd_manifest()
    assert shipped["metadata"]["name"] == ROOT_CRD_NAME
    assert shipped["spec"]["scope"] == "Cluster"
    states = shipped["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"][
        "status"]["properties"]["state"]["enum"]
    assert states == [state.value for state in SimulationState]


async def test_the_crd_is_installed_when_missing_and_waited_for() -> None:
    gets = [not_found, lambda call: {}, lambda call: ESTABLISHED]

    def answer(call: Call) -> Any:
        if call.method == "GET":
            return gets.pop(0)(call)
        return {}
    kube = FakeKube(answer=answer)
    assert await roots.ensure_crd(kube)  # type: ignore[arg-type]
    (post,) = kube.made("POST")
    assert post.body["metadata"]["name"] == ROOT_CRD_NAME


async def test_an_established_crd_is_left_alone() -> None:
    kube = FakeKube(answer=lambda call: ESTABLISHED)
    assert not await roots.ensure_crd(kube)  # type: ignore[arg-type]
    assert not kube.made("POST")


async def test_a_crd_that_never_establishes_is_an_error() -> None:
    kube = FakeKube(answer=lambda call: {})
    with pytest.raises(UnavailableError, match="not Established"):
        await roots.ensure_crd(kube, timeout=0.2)  # type: ignore[arg-type]


async def test_a_taken_root_name_is_a_conflict() -> None:
    kube = FakeKube(answer=lambda call: ApiError(code=409, reason="AlreadyExists", message=""))
    with pytest.raises(SimulationConflictError, match="root sim already exists"):
        await roots.create_root(kube, name="sim", spec={})  # type: ignore[arg-type]


async def test_delete_waits_until_the_root_is_gone() -> None:
    gets = [lambda call: {}, lambda call: {}, not_found]

    def answer(call: Call) -> Any:
        return gets.pop(0)(call) if call.method == "GET" else {}
    kube = FakeKube(answer=answer)
    await roots.delete_root(kube, "sim", timeout=5)  # type: ignore[arg-type]
    (delete,) = kube.made("DELETE")
    assert delete.body["propagationPolicy"] == "Foreground"
    stuck = FakeKube(answer=lambda call: {})
    with pytest.raises(UnavailableError, match="not garbage collected"):
        await roots.delete_root(stuck, "sim", timeout=0.3)  # type: ignore[arg-type]


def test_status_carries_progress_and_recent_failures() -> None:
    failures = tuple(FailureRecord(trace_offset_ms=i, operation=Operation.DELETE, object="o",
                                   code=403, reason="Forbidden", message="m", attempts=2)
                     for i in range(30))
    body = roots.status_body(ProgressSnapshot(
        name="sim", state=SimulationState.RUNNING, events_applied=3, events_total=9,
        objects_failed=30, failures=failures, lag_p99_ms=1.23456))
    status = body["status"]
    assert (status["state"], status["events"], status["lagP99Ms"]) == ("Running", "3/9", 1.235)
    assert len(status["failures"]) == roots.STATUS_FAILURES
    assert status["failures"][-1]["traceOffsetMs"] == 29


async def test_status_reports_never_raise() -> None:
    kube = FakeKube(answer=lambda call: ApiError(code=0, reason="Down", message=""))
    await roots.report_status(kube, roots.RootRef(name="s", uid="u"),  # type: ignore[arg-type]
                              ProgressSnapshot(name="s", state=SimulationState.RUNNING))
