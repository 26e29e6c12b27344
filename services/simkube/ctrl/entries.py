"""One run as the Simulation's ``status.runs`` lists it, typed.

The list is how a restarted sk-ctrl finds the run in progress, and skctl, the docs and the
tests read its JSON, so the shape is a contract: camelCase keys, optional ones left out
until they have a value. ``from_status`` and ``to_status`` are the only places that know it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from simkube.simulation.states import ACTIVE, State


@dataclass(kw_only=True)
class RunEntry:
    run: int
    state: str
    start_time: str
    results_dir: str
    end_time: str | None = None
    message: str | None = None
    warning: str | None = None
    events_applied: int | None = None
    failures: int | None = None
    achieved_speed: float | None = None  # trace s per wall s, pauses excluded
    held_seconds: float | None = None  # wall s the clock was held for the autoscaler
    lost: bool = False  # sk-driver forgot it (it restarted); a later run replays it

    @property
    def active(self) -> bool:
        return self.state in ACTIVE

    @property
    def finished(self) -> bool:
        return self.state == State.FINISHED

    def end(self, *, state: str, end_time: str, message: str | None = None) -> None:
        self.state, self.end_time = state, end_time
        if message:
            self.message = message

    @classmethod
    def from_status(cls, entry: Mapping[str, Any]) -> RunEntry:
        def optional_int(key: str) -> int | None:
            value = entry.get(key)
            return None if value is None else int(value)

        def optional_float(key: str) -> float | None:
            value = entry.get(key)
            return None if value is None else float(value)

        def optional_str(key: str) -> str | None:
            value = entry.get(key)
            return None if value is None else str(value)
        return cls(run=int(entry["run"]), state=str(entry.get("state") or ""),
                   start_time=str(entry.get("startTime") or ""),
                   results_dir=str(entry.get("resultsDir") or ""),
                   end_time=optional_str("endTime"), message=optional_str("message"),
                   warning=optional_str("warning"),
                   events_applied=optional_int("eventsApplied"),
                   failures=optional_int("failures"),
                   achieved_speed=optional_float("achievedSpeed"),
                   held_seconds=optional_float("heldSeconds"),
                   lost=bool(entry.get("lost", False)))

    def to_status(self) -> dict[str, Any]:
        status: dict[str, Any] = {"run": self.run, "state": self.state,
                                  "startTime": self.start_time, "resultsDir": self.results_dir}
        optional = {"endTime": self.end_time, "message": self.message, "warning": self.warning,
                    "eventsApplied": self.events_applied, "failures": self.failures,
                    "achievedSpeed": self.achieved_speed, "heldSeconds": self.held_seconds}
        status.update({key: value for key, value in optional.items() if value is not None})
        if self.lost:
            status["lost"] = True
        return status
