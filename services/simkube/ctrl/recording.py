"""The results recorder around one run, kept from ever failing the run it measures.

Measurements are valuable but secondary: a recorder that cannot start or stop (a full disk,
an API hiccup) is reported in the log and as a Warning Event, and the replay goes on. A
restarted sk-ctrl starts a recorder on the same run directory, which appends to it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from simkube.core.kubeapi import KubeClient
from simkube.core.logs import get_logger

log = get_logger(__name__)


class RunRecorder:
    def __init__(self, *, kube: KubeClient, run_dir: Path, simulation: str, run: int,
                 namespace_prefix: str, groups: Mapping[str, float],
                 trace_clock: Callable[[], float], speed: float) -> None:
        self.run_dir = run_dir
        self.error: str | None = None
        self._recorder: Any = None
        try:
            # Looked up at run time: an sk-ctrl installed without the results package still
            # runs simulations, and says so on each run (RecorderFailed).
            recorder_class = importlib.import_module("simkube.results").Recorder
        except (ImportError, AttributeError) as exc:
            self.error = f"the results recorder is not available: {exc}"
            return
        self._recorder = recorder_class(
            kube=kube, run_dir=run_dir, simulation=simulation, run=run,
            namespace_prefix=namespace_prefix, groups=dict(groups), trace_clock=trace_clock,
            speed=speed)

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

    async def stop(self, *, state: str, driver: Mapping[str, Any]) -> None:
        recorder, self._recorder = self._recorder, None
        if recorder is None:
            return
        try:
            await recorder.stop(state=state, driver=dict(driver))
        except Exception as exc:
            self.error = f"the results recorder did not stop cleanly: {exc}"
            log.warning("recorder did not stop", run_dir=str(self.run_dir), error=str(exc))
