"""List then watch Simulations, feeding every change to the reconciler.

A watch resumes from the last resourceVersion it saw (bookmarks keep it fresh); when the
server says the version is too old (410 Gone, as a status or as an ERROR event) or the
connection breaks in a way resuming cannot fix, the whole list is read again and replaces
the cache, so a missed delete can never leave a ghost simulation behind. The watch itself is
core's ``watch_from``; the loop is ours, because a broken connection (no answer, code 0)
resumes the watch instead of re-listing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any, Protocol

from simkube.core.kubeapi import ApiError, Cursor, GoneError, KubeClient, watch_from
from simkube.core.logs import get_logger
from simkube.simulation.names import SIMULATIONS_PATH

log = get_logger(__name__)
WATCH_TIMEOUT_S = 300
RETRY_DELAY_S = 1.0


class Sink(Protocol):
    def replace(self, simulations: Iterable[dict[str, Any]]) -> None: ...
    def apply(self, kind: str, simulation: dict[str, Any]) -> None: ...


async def _watch_from(kube: KubeClient, sink: Sink, version: str) -> None:
    cursor = Cursor(version)
    while True:
        try:
            async for kind, obj in watch_from(kube, SIMULATIONS_PATH, cursor,
                                              seconds=WATCH_TIMEOUT_S):
                if kind in ("ADDED", "MODIFIED", "DELETED"):
                    sink.apply(kind, obj)
        except GoneError:
            raise
        except ApiError as exc:
            if exc.code != 0:
                raise
            log.info("simulation watch broke, resuming", error=str(exc))
            await asyncio.sleep(RETRY_DELAY_S)


async def watch_simulations(kube: KubeClient, sink: Sink) -> None:
    """Runs until cancelled."""
    while True:
        try:
            listing = await kube.request("GET", SIMULATIONS_PATH)
            sink.replace(listing.get("items") or [])
            await _watch_from(kube, sink, str(listing["metadata"]["resourceVersion"]))
        except GoneError:
            log.info("simulation watch expired, listing again")
        except ApiError as exc:
            log.warning("cannot list or watch simulations", error=str(exc))
            await asyncio.sleep(RETRY_DELAY_S)
