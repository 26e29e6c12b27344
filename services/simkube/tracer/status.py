"""What each kind's watcher is doing, shared by watchers (writers) and GetStatus (reader)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class WatchState(IntEnum):
    """Mirrors ``simkube.tracer.v1.WatchState`` value for value."""

    UNSPECIFIED = 0
    LISTING = 1
    WATCHING = 2
    BACKOFF = 3
    WAITING_FOR_CRD = 4
    STOPPED = 5


@dataclass(slots=True, kw_only=True)
class KindStatus:
    kind: str
    state: WatchState = WatchState.UNSPECIFIED
    resource_version: str = ""
    events_stored: int = 0
    resyncs: int = 0
    last_error: str = ""
    last_event_ms: int | None = None
