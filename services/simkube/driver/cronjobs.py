"""CronJobs fired on the trace's clock, so a replay at any speed launches the Jobs production did.

The controller manager's CronJob controller reads the cluster's wall clock: at speed 10 an
every-minute CronJob would fire once per ten trace minutes, and even at speed 1 its minute
boundaries fall at other trace times than production's (a replay starts mid-minute). So the
rewriter applies every replayed CronJob suspended, and this module fires it instead: it
evaluates the recorded schedule (``cron.py``) on the trace's timeline — trace offset 0 is the
trace's first event, a real Unix time — waits for each firing on the replay clock (pauses and
holds included) plus the controller's own 100 ms, and creates the Job the controller would:
named ``<cronjob>-<minutes since the epoch>``, from the job template, owned by the CronJob.
The controller still keeps the CronJob's status and its Job history (it does both for
suspended CronJobs too).

Concurrency policies are honoured: ``Forbid`` skips a firing while one of this CronJob's Jobs
is still active, ``Replace`` deletes the active ones first. A CronJob recorded as suspended
never fires; one the trace changes is re-planned from the change's trace time, one it
deletes stops. A schedule this module cannot evaluate is reported as a failed object.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, tzinfo
from enum import Enum
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from simkube.core.kubeapi import JOBS, ApiError, KubeClient, apply, delete, retry
from simkube.core.logs import get_logger
from simkube.driver.clock import ReplayClock
from simkube.driver.cron import CronSchedule, CronScheduleError
from simkube.driver.jobtemplates import is_active, job_from_cronjob
from simkube.driver.names import FIELD_MANAGER
from simkube.driver.progress import FailureRecord, Operation
from simkube.trace import KubeObject, ObjectRef

log = get_logger(__name__)
ATTEMPTS = 5
# The CronJob controller wakes 100 ms after each scheduled time (``nextScheduleDelta``,
# pkg/controller/cronjob, against clock skew), so production's Jobs come that much after the
# minute; firing on the minute put the replay's Jobs ~0.1 s early, on the right side of
# every race with an autoscaler loop that production's lost.
CONTROLLER_DELAY_MS = 100


class ConcurrencyPolicy(Enum):
    ALLOW = "Allow"
    FORBID = "Forbid"
    REPLACE = "Replace"


def _zone(name: object) -> tzinfo:
    """The CronJob's ``timeZone``; without one, the controller manager's zone (UTC here)."""
    if name is None:
        return UTC
    try:
        return ZoneInfo(str(name))
    except (ZoneInfoNotFoundError, ValueError):
        raise CronScheduleError(f"unknown time zone {name!r}") from None


class CronFirer:
    def __init__(self, *, kube: KubeClient, clock: ReplayClock, start_ms: int,
                 simulation: str, failed: Callable[[FailureRecord], None],
                 makes_pods: Callable[[], None] = lambda: None) -> None:
        self._kube = kube
        self._makes_pods = makes_pods  # told just before a Job goes out (``pod_work.py``)
        self._clock = clock
        self._start_ms = start_ms
        self._simulation = simulation
        self._failed = failed
        self._tasks: dict[ObjectRef, asyncio.Task[None]] = {}
        self._last: dict[ObjectRef, datetime] = {}  # last firing, kept across changes
        self._jobs: dict[ObjectRef, list[str]] = {}  # Jobs created, for the policies
        self.fired = 0

    def track(self, original: KubeObject, stored: KubeObject, offset_ms: int) -> None:
        """The replay applied ``original`` (as the trace has it) and the cluster stored
        ``stored``: plan its firings if it is a CronJob (``Applier``'s hook)."""
        if original.get("kind") == "CronJob" and original.get("apiVersion") == "batch/v1":
            self.applied(original, stored, offset_ms=offset_ms)

    def applied(self, original: KubeObject, cronjob: KubeObject, *, offset_ms: int) -> None:
        """The trace applied CronJob ``original``; ``cronjob`` is the simulated cluster's copy."""
        ref = ObjectRef.of(original)
        self.deleted(ref)
        spec = original.get("spec") or {}
        try:
            schedule = CronSchedule.parse(str(spec.get("schedule", "")))
            zone = _zone(spec.get("timeZone"))
            policy = ConcurrencyPolicy(spec.get("concurrencyPolicy") or "Allow")
        except (CronScheduleError, ValueError) as exc:
            self._failed(FailureRecord(trace_offset_ms=offset_ms, operation=Operation.FIRE,
                                       object=str(ref), code=0, reason="BadSchedule",
                                       message=f"the CronJob cannot fire: {exc}", attempts=1))
            return
        if spec.get("suspend") is True:
            return
        task = asyncio.create_task(self._fire_all(ref, cronjob, schedule=schedule, zone=zone,
                                                  policy=policy, since_ms=offset_ms))
        self._tasks[ref] = task

    def deleted(self, ref: ObjectRef) -> None:
        task = self._tasks.pop(ref, None)
        if task is not None:
            task.cancel()

    async def close(self) -> None:
        tasks = list(self._tasks.values())
        self._tasks.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _unix(self, offset_ms: float) -> datetime:
        return datetime.fromtimestamp((self._start_ms + offset_ms) / 1000.0, tz=UTC)

    async def _fire_all(self, ref: ObjectRef, cronjob: KubeObject, *, schedule: CronSchedule,
                        zone: tzinfo, policy: ConcurrencyPolicy, since_ms: int) -> None:
        moment = max(self._unix(since_ms), self._last.get(ref, self._unix(since_ms)))
        while (firing := schedule.next_after(moment.astimezone(zone))) is not None:
            offset_ms = firing.timestamp() * 1000.0 - self._start_ms
            await self._clock.wait_until(offset_ms + CONTROLLER_DELAY_MS)
            self._last[ref] = moment = firing
            await self._fire(ref, cronjob, firing=firing, policy=policy,
                             offset_ms=int(offset_ms))

    async def _fire(self, ref: ObjectRef, cronjob: KubeObject, *, firing: datetime,
                    policy: ConcurrencyPolicy, offset_ms: int) -> None:
        namespace = cronjob["metadata"]["namespace"]
        job = job_from_cronjob(cronjob, firing=firing, simulation=self._simulation)
        name = job["metadata"]["name"]
        try:
            if policy is not ConcurrencyPolicy.ALLOW:
                active = await self._active_jobs(ref, namespace)
                if active and policy is ConcurrencyPolicy.FORBID:
                    log.info("cronjob firing skipped", cronjob=str(ref), job=name,
                             active=active, policy=policy.value)
                    return
                for other in active:
                    await delete(self._kube, JOBS.path(namespace=namespace, name=other))
            path = JOBS.path(namespace=namespace, name=name)
            self._makes_pods()
            await retry(lambda: apply(self._kube, path, job, field_manager=FIELD_MANAGER),
                        attempts=ATTEMPTS)
        except ApiError as exc:
            self._failed(FailureRecord(trace_offset_ms=offset_ms, operation=Operation.FIRE,
                                       object=f"batch/v1.Job {namespace}/{name}", code=exc.code,
                                       reason=exc.reason, message=exc.message,
                                       attempts=ATTEMPTS if exc.transient else 1))
            return
        self._jobs.setdefault(ref, []).append(name)
        self.fired += 1
        log.debug("cronjob fired", cronjob=str(ref), job=name, trace_offset_ms=offset_ms)

    async def _active_jobs(self, ref: ObjectRef, namespace: str) -> list[str]:
        active = []
        for name in self._jobs.get(ref, []):
            try:
                job = await self._kube.request("GET", JOBS.path(namespace=namespace, name=name))
            except ApiError as exc:
                if exc.code == 404:  # removed by the history cleanup: finished
                    continue
                raise
            if is_active(job):
                active.append(name)
        self._jobs[ref] = active  # finished ones no longer matter to any policy
        return active
