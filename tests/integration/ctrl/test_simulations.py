"""sk-ctrl end to end against the real environment, a real sk-driver and sk-ctrl processes."""

from __future__ import annotations

import asyncio
import datetime
from pathlib import Path

import pytest

from simkube.core.kubeapi import MERGE_PATCH, ApiError, KubeClient
from simkube.simulation.names import FINALIZER, simulation_path
from tests.integration.ctrl.conftest import (
    Controller,
    create,
    events_of,
    get,
    trace_file,
    unique,
    wait_gone,
    wait_state,
)
from tests.support.kube import eventually

pytestmark = pytest.mark.integration


async def test_two_repetitions_finish(api: KubeClient, ctrl: Controller, tmp_path: Path) -> None:
    name = unique("reps")
    trace = trace_file(tmp_path, seconds=20)
    await create(api, name, trace={"path": str(trace)}, speed=20, repetitions=2,
                 namespacePrefix=unique("v"))
    done = await wait_state(api, name, "Finished", "Failed", timeout=90)
    status = done["status"]
    assert status["state"] == "Finished", status
    assert FINALIZER in done["metadata"]["finalizers"]
    assert (status["currentRun"], status["completedRuns"]) == (2, 2)
    assert (status["eventsApplied"], status["eventsTotal"], status["failures"]) == (5, 5, 0)
    assert status["traceTimeSeconds"] == status["traceLengthSeconds"] == 20
    assert status["observedGeneration"] == done["metadata"]["generation"]
    assert status["startTime"] <= status["endTime"]
    assert status["resultsDir"] == str(ctrl.results / name)
    assert [(r["run"], r["state"], r["eventsApplied"]) for r in status["runs"]] == [
        (1, "Finished", 5), (2, "Finished", 5)]
    conditions = {c["type"]: c for c in status["conditions"]}
    assert conditions["Completed"]["status"] == "True"
    assert conditions["LeaseHeld"]["status"] == "False"
    for run in (1, 2):
        assert (ctrl.results / name / f"run-{run}" / "timeline.csv").is_file()
    reasons = [e["reason"] for e in await events_of(api, name)]
    for reason in ("Pending", "Initializing", "RunStarted", "RunFinished", "Finished"):
        assert reason in reasons, reasons
    assert reasons.count("RunStarted") == 2


async def test_one_at_a_time(api: KubeClient, ctrl: Controller, tmp_path: Path) -> None:
    trace = trace_file(tmp_path, seconds=40)
    first, second = unique("a-first"), unique("b-second")
    await create(api, first, trace={"path": str(trace)}, speed=10, namespacePrefix=unique("v"))
    await wait_state(api, first, "Running")
    await create(api, second, trace={"path": str(trace)}, speed=20,
                 namespacePrefix=unique("v"))
    blocked = await wait_state(api, second, "Blocked", timeout=20)
    assert first in blocked["status"]["message"]
    lease = await api.request(
        "GET", "/apis/coordination.k8s.io/v1/namespaces/sk-ctrl-it/leases/sk-ctrl-simulation")
    assert lease["spec"]["holderIdentity"] == first
    assert (await get(api, first) or {})["status"]["state"] in ("Running", "Initializing")
    done_first = await wait_state(api, first, "Finished", timeout=60)
    await wait_state(api, second, "Running", "Initializing", "Finished", timeout=30)
    done_second = await wait_state(api, second, "Finished", timeout=60)
    assert done_second["status"]["startTime"] >= done_first["status"]["endTime"]


def stamp() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def test_pause_and_resume(api: KubeClient, ctrl: Controller, tmp_path: Path) -> None:
    name = unique("pause")
    trace = trace_file(tmp_path, seconds=60)
    await create(api, name, trace={"path": str(trace)}, speed=10, namespacePrefix=unique("v"))
    await wait_state(api, name, "Running")
    await asyncio.sleep(1)
    await api.request("PATCH", simulation_path(name), body={"spec": {"pausedTime": stamp()}},
                      content_type=MERGE_PATCH)
    paused = await wait_state(api, name, "Paused", timeout=15)
    await asyncio.sleep(1.5)  # the last progress before the pause may still be on its way
    held = (await get(api, name) or {})["status"]["traceTimeSeconds"]
    await asyncio.sleep(3)
    still = await get(api, name) or {}
    assert still["status"]["state"] == "Paused"
    assert still["status"]["traceTimeSeconds"] == held, "trace time advanced while paused"
    assert held < 60
    assert paused["status"]["observedGeneration"] <= still["metadata"]["generation"]
    await api.request("PATCH", simulation_path(name), body={"spec": {"pausedTime": None}},
                      content_type=MERGE_PATCH)
    await wait_state(api, name, "Running", "Finished", timeout=15)
    done = await wait_state(api, name, "Finished", timeout=60)
    assert done["status"]["observedGeneration"] == done["metadata"]["generation"]
    reasons = [e["reason"] for e in await events_of(api, name)]
    assert "Paused" in reasons
    assert "Resumed" in reasons


async def test_delete_running(api: KubeClient, ctrl: Controller, tmp_path: Path) -> None:
    name, prefix = unique("del"), unique("v")
    trace = trace_file(tmp_path, seconds=300)
    await create(api, name, trace={"path": str(trace)}, speed=10, namespacePrefix=prefix)
    await wait_state(api, name, "Running")

    async def namespace_made() -> bool:
        return await api.exists(f"/api/v1/namespaces/{prefix}-app")
    await eventually(namespace_made, timeout=20, what="the virtual namespace")
    await api.request("DELETE", simulation_path(name))
    await wait_gone(api, name, timeout=90)
    assert not await api.exists(f"/api/v1/namespaces/{prefix}-app")
    assert not await api.exists(f"/apis/simkube.dev/v1alpha1/simulationroots/{name}-r1")
    lease = await api.request(
        "GET", "/apis/coordination.k8s.io/v1/namespaces/sk-ctrl-it/leases/sk-ctrl-simulation")
    assert lease["spec"].get("holderIdentity") != name


async def test_restart_reattaches(api: KubeClient, ctrl: Controller, tmp_path: Path) -> None:
    name = unique("restart")
    trace = trace_file(tmp_path, seconds=120)
    await create(api, name, trace={"path": str(trace)}, speed=10, namespacePrefix=unique("v"))
    await wait_state(api, name, "Running")
    await asyncio.sleep(2)
    ctrl.kill()
    before = (await get(api, name) or {})["status"]
    assert before["state"] == "Running"
    await asyncio.sleep(2)
    await ctrl.start()
    done = await wait_state(api, name, "Finished", "Failed", timeout=60)
    status = done["status"]
    assert status["state"] == "Finished", status
    assert [(r["run"], r["state"]) for r in status["runs"]] == [(1, "Finished")]
    assert status["eventsApplied"] == status["eventsTotal"] == 25
    reasons = [e["reason"] for e in await events_of(api, name)]
    assert "Reattached" in reasons
    assert reasons.count("RunStarted") == 1


async def test_bad_specs_fail(api: KubeClient, ctrl: Controller, tmp_path: Path) -> None:
    missing = unique("missing")
    await create(api, missing, trace={"path": str(tmp_path / "nope.sktrace")}, speed=10,
                 namespacePrefix=unique("v"))
    failed = await wait_state(api, missing, "Failed", "Finished")
    assert failed["status"]["state"] == "Failed"
    assert f"trace file {tmp_path / 'nope.sktrace'} does not exist" in \
        failed["status"]["message"]
    assert failed["status"]["runs"][0]["state"] == "Failed"
    assert not await api.exists(f"/apis/simkube.dev/v1alpha1/simulationroots/{missing}-r1")

    window = unique("window")
    await create(api, window, trace={"tracer": {"address": "127.0.0.1:1", "start": "today"}})
    invalid = await wait_state(api, window, "Failed")
    assert invalid["status"]["message"] == ("spec.trace.tracer.start 'today' is not an RFC "
                                            "3339 time (for example 2026-11-21T10:00:00Z)")
    assert "runs" not in invalid["status"]
    warnings = [(e["reason"], e["type"]) for e in await events_of(api, window)]
    assert ("InvalidSpec", "Warning") in warnings

    with pytest.raises(ApiError) as refused:  # the CRD's schema refuses what it can
        await create(api, unique("neg"), trace={"path": "/t", "url": "http://x/t"}, speed=-1)
    assert refused.value.code == 422
    assert "spec.speed" in refused.value.message
