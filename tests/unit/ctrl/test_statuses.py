"""Status patches: observedGeneration, conditions' transition times, progress throttling."""

from __future__ import annotations

from typing import Any

import pytest

from simkube.ctrl import statuses
from simkube.ctrl.events import event_body
from simkube.ctrl.statuses import StatusWriter, condition, progress_fields
from simkube.gen.simkube.driver.v1 import driver_pb2

pytestmark = pytest.mark.unit


class FakeKube:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, Any, str]] = []

    async def request(self, method: str, path: str, *, body: Any = None,
                      content_type: str = "", **_: Any) -> dict[str, Any]:
        self.calls.append((method, path, body, content_type))
        return {}


def test_condition_keeps_transition_time_while_unchanged(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    monkeypatch.setattr(statuses, "now", lambda: "2026-01-01T00:00:00Z")
    first = condition(kind="LeaseHeld", true=True, reason="Acquired", message="m",
                      generation=2)
    assert first == [{"type": "LeaseHeld", "status": "True", "reason": "Acquired",
                      "message": "m", "lastTransitionTime": "2026-01-01T00:00:00Z",
                      "observedGeneration": 2}]
    monkeypatch.setattr(statuses, "now", lambda: "2026-01-01T00:05:00Z")
    same = condition(kind="LeaseHeld", true=True, reason="Acquired", message="m2",
                     existing=first)
    assert same[0]["lastTransitionTime"] == "2026-01-01T00:00:00Z"
    flipped = condition(kind="LeaseHeld", true=False, reason="Released", message="",
                        existing=same)
    assert flipped[0]["lastTransitionTime"] == "2026-01-01T00:05:00Z"
    both = condition(kind="Completed", true=True, reason="Finished", message="",
                     existing=flipped)
    assert [c["type"] for c in both] == ["LeaseHeld", "Completed"]


def test_progress_fields() -> None:
    progress = driver_pb2.SimulationProgress(
        events_applied=12, events_total=30, objects_failed=1, trace_time_ms=12_500,
        trace_length_ms=600_000, lag_current_ms=1.2345, lag_p99_ms=3.4)
    assert progress_fields(progress) == {
        "eventsApplied": 12, "eventsTotal": 30, "failures": 1, "traceTimeSeconds": 12.5,
        "traceLengthSeconds": 600.0, "lagMs": 1.234, "lagP99Ms": 3.4, "heldSeconds": 0.0}
    progress.wall_time_ms, progress.paused_ms, progress.held_ms = 3_000, 500, 250
    fields = progress_fields(progress)
    assert (fields["achievedSpeed"], fields["heldSeconds"]) == (5.0, 0.25)  # 12.5 s / 2.5 s


async def test_writer_patches_status_with_observed_generation() -> None:
    kube = FakeKube()
    writer = StatusWriter(kube=kube, name="s", status={"state": "Pending"},  # type: ignore[arg-type]
                          generation=lambda: 7)
    await writer.write(state="Running", currentRun=1)
    assert kube.calls == [("PATCH", "/apis/simkube.dev/v1alpha1/simulations/s/status",
                           {"status": {"state": "Running", "currentRun": 1,
                                       "observedGeneration": 7}},
                           "application/merge-patch+json")]
    assert writer.state == "Running"


async def test_progress_is_written_at_most_once_a_second() -> None:
    kube = FakeKube()
    clock = [100.0]
    writer = StatusWriter(kube=kube, name="s", status={},  # type: ignore[arg-type]
                          generation=lambda: 1, clock=lambda: clock[0])
    assert await writer.progress(eventsApplied=1)
    clock[0] += 0.3
    assert not await writer.progress(eventsApplied=2)
    clock[0] += 0.3
    assert not await writer.progress(eventsApplied=3, lagMs=1.0)
    clock[0] += 0.5
    assert await writer.progress(eventsApplied=3, lagMs=1.0)
    assert len(kube.calls) == 2
    assert kube.calls[1][2] == {"status": {"eventsApplied": 3, "lagMs": 1.0,
                                           "observedGeneration": 1}}
    clock[0] += 5
    assert not await writer.progress(eventsApplied=3, lagMs=1.0)  # nothing new: no write
    await writer.write(state="Finished")  # a state change goes out at once
    assert kube.calls[-1][2]["status"]["state"] == "Finished"


def test_event_points_at_the_simulation() -> None:
    body = event_body({"metadata": {"name": "s", "uid": "u1"}}, reason="RunStarted",
                      message="run 1 of 2 started", warning=False)
    assert body["involvedObject"]["kind"] == "Simulation"
    assert body["involvedObject"]["apiVersion"] == "simkube.dev/v1alpha1"
    assert (body["involvedObject"]["name"], body["involvedObject"]["uid"]) == ("s", "u1")
    assert body["metadata"] == {"generateName": "s.", "namespace": "default"}
    assert (body["reason"], body["type"]) == ("RunStarted", "Normal")
    assert event_body({"metadata": {"name": "s"}}, reason="Failed", message="x",
                      warning=True)["type"] == "Warning"
