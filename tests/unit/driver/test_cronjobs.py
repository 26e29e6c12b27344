"""The CronJob firer's decisions: when it fires, what it skips, replaces and reports.

A replay clock at speed 6,000 (a trace minute in 10 ms of wall time) and a scripted API keep
these fast; the firing against a real cluster is in tests/integration/driver/test_samples.py.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from simkube.core.kubeapi import ApiError
from simkube.core.simtime import TimeScale
from simkube.driver.clock import ReplayClock
from simkube.driver.cronjobs import CronFirer
from simkube.driver.progress import FailureRecord, Operation
from simkube.trace import ObjectRef
from tests.support.kube import eventually
from tests.unit.driver.fakes import Call, FakeKube

pytestmark = [pytest.mark.unit, pytest.mark.asyncio]

START_MS = 1_743_286_823_000  # 23 s into a minute
FIRST_MINUTE = 1_743_286_860 // 60


def cronjob(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": "hello", "namespace": "default"},
            "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {}}, **spec}}


STORED = {"apiVersion": "batch/v1", "kind": "CronJob",
          "metadata": {"name": "hello", "namespace": "v-default", "uid": "u-1"},
          "spec": {"jobTemplate": {"spec": {}}}}


class RecordingClock(ReplayClock):
    """The replay clock, noting every trace time waited for."""

    def __init__(self, *, scale: TimeScale) -> None:
        super().__init__(scale=scale)
        self.waited_for: list[float] = []

    async def wait_until(self, offset_ms: float) -> float:
        self.waited_for.append(offset_ms)
        return await super().wait_until(offset_ms)


class Setup:
    def __init__(self, answer: Any = lambda call: {}) -> None:
        self.kube = FakeKube(answer=answer)
        self.clock = RecordingClock(scale=TimeScale(6000.0))
        self.failures: list[FailureRecord] = []
        self.about_to_fire: list[int] = []  # PATCHes sent before each firing was announced
        self.firer = CronFirer(kube=self.kube, clock=self.clock,  # type: ignore[arg-type]
                               start_ms=START_MS, simulation="sim",
                               failed=self.failures.append,
                               makes_pods=lambda: self.about_to_fire.append(
                                   len(self.applied_jobs())))
        self.clock.start()

    def applied_jobs(self) -> list[str]:
        return [call.path.rsplit("/", 1)[1] for call in self.kube.calls
                if call.method == "PATCH" and "/jobs/" in call.path]

    async def run_until(self, fired: int) -> None:
        async def enough() -> bool:
            return self.firer.fired >= fired
        await eventually(enough, timeout=5, what=f"{fired} firings", interval=0.005)


async def test_fires_at_each_minute_boundary_of_the_trace() -> None:
    setup = Setup()
    setup.firer.track(cronjob(), STORED, 0)
    await setup.run_until(3)
    await setup.firer.close()
    assert setup.applied_jobs()[:3] == [f"hello-{FIRST_MINUTE + n}" for n in range(3)]
    first = setup.kube.calls[0].path
    assert first == f"/apis/batch/v1/namespaces/v-default/jobs/hello-{FIRST_MINUTE}"
    assert setup.about_to_fire[:3] == [0, 1, 2]  # each Job announced just before it went out
    # As the CronJob controller: 100 ms after each minute (37 s into the trace), not on it.
    assert setup.clock.waited_for[:3] == [37_100.0, 97_100.0, 157_100.0]


async def test_suspended_cronjobs_and_other_kinds_never_fire() -> None:
    setup = Setup()
    setup.firer.track(cronjob(suspend=True), STORED, 0)
    setup.firer.track({"apiVersion": "apps/v1", "kind": "Deployment",
                       "metadata": {"name": "d"}}, {}, 0)
    await asyncio.sleep(0.1)  # ten trace minutes
    await setup.firer.close()
    assert setup.kube.calls == []
    assert setup.firer.fired == 0


async def test_a_deleted_cronjob_stops_firing() -> None:
    setup = Setup()
    setup.firer.track(cronjob(), STORED, 0)
    await setup.run_until(1)
    setup.firer.deleted(ObjectRef.of(cronjob()))
    fired = setup.firer.fired
    await asyncio.sleep(0.05)
    assert setup.firer.fired == fired
    await setup.firer.close()


async def test_a_changed_schedule_is_replanned_without_firing_a_minute_twice() -> None:
    setup = Setup()
    setup.firer.track(cronjob(), STORED, 0)
    await setup.run_until(2)
    setup.firer.track(cronjob(schedule="*/5 * * * *"), STORED,
                      int(setup.clock.trace_offset_ms()))
    await setup.run_until(3)
    await setup.firer.close()
    jobs = setup.applied_jobs()
    assert len(jobs) == len(set(jobs))
    assert int(jobs[-1].rsplit("-", 1)[1]) % 5 == 0


@pytest.mark.parametrize(("spec", "message"), [
    ({"schedule": "61 * * * *"}, "minute 61 is outside 0-59"),
    ({"timeZone": "Mars/Olympus"}, "unknown time zone 'Mars/Olympus'"),
    ({"concurrencyPolicy": "Sometimes"}, "'Sometimes' is not a valid ConcurrencyPolicy")])
async def test_a_cronjob_that_cannot_fire_is_a_failed_object(spec: dict[str, Any],
                                                            message: str) -> None:
    setup = Setup()
    setup.firer.track(cronjob(**spec), STORED, 1_500)
    await setup.firer.close()
    [failure] = setup.failures
    assert failure.operation is Operation.FIRE
    assert failure.reason == "BadSchedule"
    assert failure.object == "batch/v1.CronJob default/hello"
    assert failure.trace_offset_ms == 1_500
    assert message in failure.message


def job_status(active: set[str]) -> Any:
    def answer(call: Call) -> Any:
        name = call.path.rsplit("/", 1)[1]
        if call.method == "GET":
            finished = [] if name in active else [{"type": "Complete", "status": "True"}]
            return {"status": {"conditions": finished}}
        return {}
    return answer


async def test_forbid_skips_a_firing_while_the_last_job_runs() -> None:
    active = {f"hello-{FIRST_MINUTE}"}
    setup = Setup(job_status(active))
    setup.firer.track(cronjob(concurrencyPolicy="Forbid"), STORED, 0)
    await setup.run_until(1)
    await asyncio.sleep(0.05)  # five more trace minutes, all while the first Job runs
    assert setup.applied_jobs() == [f"hello-{FIRST_MINUTE}"]
    active.clear()
    await setup.run_until(2)
    await setup.firer.close()
    assert len(setup.applied_jobs()) >= 2


async def test_replace_deletes_the_running_job_first() -> None:
    setup = Setup(job_status({f"hello-{FIRST_MINUTE}"}))
    setup.firer.track(cronjob(concurrencyPolicy="Replace"), STORED, 0)
    await setup.run_until(2)
    await setup.firer.close()
    deletes = [call.path for call in setup.kube.calls if call.method == "DELETE"]
    assert deletes[0].endswith(f"/jobs/hello-{FIRST_MINUTE}")
    order = [call.method for call in setup.kube.calls if call.method != "GET"]
    assert order[:3] == ["PATCH", "DELETE", "PATCH"]


async def test_a_refused_job_is_a_failed_firing_and_the_schedule_goes_on() -> None:
    def refuse(call: Call) -> Any:
        return ApiError(code=422, reason="Invalid", message="spec.template: Required value")
    setup = Setup(refuse)
    setup.firer.track(cronjob(), STORED, 0)
    async def two() -> bool:
        return len(setup.failures) >= 2
    await eventually(two, timeout=5, what="two failed firings", interval=0.005)
    await setup.firer.close()
    assert setup.failures[0].operation is Operation.FIRE
    assert setup.failures[0].object == f"batch/v1.Job v-default/hello-{FIRST_MINUTE}"
    assert setup.failures[0].trace_offset_ms == 37_000
    assert setup.failures[0].code == 422
    assert setup.failures[0].attempts == 1
