"""The results recorder around one run, kept from ever failing the run it measures.

Measurements are valuable but secondary: a recorder that cannot start or stop (a full disk,
an API hiccup) is reported in the log and as a Warning Event, and the replay goes on. A
restarted sk-ctrl starts a recorder on the same run directory, which appends to it — but a
new Simulation that reuses an old one's name must not append to the old results, so they are
set aside when its first run starts.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from pathlib import Path

from simkube.core.kubeapi import KubeClient
from simkube.core.logs import get_logger
from simkube.core.simtime import TimeScale, achieved_speed
from simkube.gen.simkube.driver.v1 import driver_pb2
from simkube.results import Recorder, RunSummary

log = get_logger(__name__)


def unstarted_warning(summary: RunSummary | None) -> str | None:
    """The run's warning when pods were bound to a node but never started (issue #18)."""
    if summary is None or not summary.pods.bound_never_started:
        return None
    count = summary.pods.bound_never_started
    names = list(summary.pods.bound_never_started_pods)[:3]
    return (f"{count} pod(s) were bound to a node but never started ({', '.join(names)}"
            f"{', ...' if count > len(names) else ''}): the simulator's fault, not the "
            "workload's; see the report")


def driver_summary(progress: driver_pb2.SimulationProgress | None) -> dict[str, float]:
    """The driver's last word on a run, as the run's summary keeps it: with the achieved
    speed (pauses excluded, holds included) and the time held for the autoscaler."""
    if progress is None:
        return {}
    summary = {"events_applied": progress.events_applied,
               "events_total": progress.events_total,
               "objects_failed": progress.objects_failed, "lag_p99_ms": progress.lag_p99_ms,
               "held_seconds": round(progress.held_ms / 1000, 3)}
    speed = achieved_speed(trace_s=progress.trace_time_ms / 1000,
                           wall_s=progress.wall_time_ms / 1000,
                           paused_s=progress.paused_ms / 1000)
    if speed is not None:
        summary["achieved_speed"] = round(speed, 3)
    return summary


def set_aside_previous(simulation_dir: Path) -> Path | None:
    """Rename an earlier simulation's results of the same name to ``NAME.previous-<UTC>``."""
    if not simulation_dir.is_dir() or not any(simulation_dir.iterdir()):
        return None
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%d%H%M%S")
    target = simulation_dir.with_name(f"{simulation_dir.name}.previous-{stamp}")
    try:
        simulation_dir.rename(target)
    except OSError as exc:  # measurements are secondary: the run goes on, appending
        log.warning("earlier results could not be set aside", error=str(exc))
        return None
    log.info("earlier results set aside", simulation_dir=str(simulation_dir), moved_to=str(target))
    return target


class RunRecorder:
    def __init__(self, *, kube: KubeClient, run_dir: Path, simulation: str, run: int,
                 namespace_prefix: str, groups: Mapping[str, float],
                 trace_clock: Callable[[], float], scale: TimeScale,
                 timers: Mapping[str, object] | None = None) -> None:
        self.run_dir = run_dir
        self.error: str | None = None
        self._recorder: Recorder | None = Recorder(
            kube=kube, run_dir=run_dir, simulation=simulation, run=run,
            namespace_prefix=namespace_prefix, groups=dict(groups), trace_clock=trace_clock,
            scale=scale, timers=timers)

    async def start(self) -> bool:
        if self._recorder is None:
            return False
        try:
            await self._recorder.start()
        except Exception as exc:
            self.error = f"the results recorder did not start: {exc}"
            log.warning("recorder did not start", run_dir=str(self.run_dir), error=str(exc))
            self._recorder = None
            return False
        return True

    async def stop(self, *, state: str, driver: Mapping[str, float]) -> RunSummary | None:
        """The run's ``RunSummary``, or None when there is no recorder or it failed to stop."""
        recorder, self._recorder = self._recorder, None
        if recorder is None:
            return None
        try:
            return await recorder.stop(state=state, driver=dict(driver))
        except Exception as exc:
            self.error = f"the results recorder did not stop cleanly: {exc}"
            log.warning("recorder did not stop", run_dir=str(self.run_dir), error=str(exc))
            return None
