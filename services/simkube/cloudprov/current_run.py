"""The Simulation run in progress as sk-cloudprov sees it: its speed and seed, for our timers.

Provisioning delays and per-group option durations in the node-groups file are trace time
(what a real cloud takes). A run at speed *s* must see them *s* times shorter in wall time,
or node arrivals — and so the autoscaler's whole behaviour — would depend on the speed the
user picked. sk-ctrl publishes the run's speed and seed in a ConfigMap
(``simulation.run_configmap``) at the start of every run and removes it at the end; this
module polls it (a GET a second, cheap next to the watches) so a restarted sk-cloudprov picks
the current run up at once. (It was ``RunTimescale``; ``TimeScale`` now means only the
conversion in ``core.simtime``, which this object carries.)

Provisioning delays count on the run's clock: while sk-ctrl holds the replay for the
autoscaler, trace time stands still, so an instance's deadline moves back by the held time
after it was requested (``held_since``: the overlap of the published holds with the time
since). The part of a hold before the request does not count: CA plans inside the loop a
hold waits for, so the first instances of a scale-up are requested mid-hold. sk-ctrl
publishes each hold once it ends and this module polls, so a deadline that falls within
about a second after a hold (or during one) can pass before the shift is seen: that node
comes early by at most the unseen held time, one hold's bound (``spec.clock.maxHold``, 2 s
of wall time by default).
"""

from __future__ import annotations

import asyncio
import hashlib

from simkube.core.kubeapi import CONFIG_MAPS, ApiError, KubeClient
from simkube.core.logs import get_logger
from simkube.core.simtime import TimeScale
from simkube.simulation.run_configmap import (
    NO_RUN,
    RUN_CONFIGMAP,
    Hold,
    RunTiming,
    read_holds,
    read_timescale,
)

log = get_logger(__name__)
POLL_S = 1.0


class CurrentRun:
    """The run's ``RunTiming``, and the jitter draws it keys by its seed."""

    def __init__(self, *, timing: RunTiming = NO_RUN) -> None:
        self.timing = timing
        self.holds: tuple[Hold, ...] = ()  # the run's recent holds, as published
        self._ordinals: dict[tuple[str, str], int] = {}
        self._counts: dict[str, int] = {}

    @property
    def scale(self) -> TimeScale:
        return self.timing.scale

    def to_wall(self, trace_s: float) -> float:
        return self.timing.scale.to_wall(trace_s)

    def share(self, *, group: str, instance: str) -> float:
        """A number in [0, 1) for ``instance``'s jitter, the same in every run of one seed.

        Placeholder pods get random names, so the draw is keyed by the instance's place in
        its group's order of arrival in this run (the reconciler looks at the oldest first),
        not by its name: two runs of one Simulation get the same delays in the same order.
        """
        key = (group, instance)
        if key not in self._ordinals:
            self._ordinals[key] = self._counts.get(group, 0)
            self._counts[group] = self._ordinals[key] + 1
        text = f"{self.timing.seed}/{group}/{self._ordinals[key]}"
        digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
        return int.from_bytes(digest) / 2**64

    def held_since(self, since: float) -> float:
        """Wall seconds the run's clock was held after Unix time ``since`` (an instance's
        request): how far its provisioning deadline moves back."""
        return sum(max(0.0, end - max(start, since)) for start, end in self.holds)

    def update(self, *, timing: RunTiming, holds: tuple[Hold, ...] | None = None) -> bool:
        """Take a new run's values; True when they changed (draws start over)."""
        if holds is not None:
            self.holds = holds
        if timing == self.timing:
            return False
        self.timing = timing
        self._ordinals.clear()
        self._counts.clear()
        self.holds = holds or ()
        log.info("run in progress", speed=timing.scale.speed, seed=timing.seed,
                 run=timing.run or None)
        return True

    async def follow(self, *, api: KubeClient, namespace: str, interval: float = POLL_S) -> None:
        path = CONFIG_MAPS.path(namespace=namespace, name=RUN_CONFIGMAP)
        while True:
            try:
                found = await api.request("GET", path)
                data = found.get("data") or {}
                timing, holds = read_timescale(data), read_holds(data)
            except ApiError as exc:
                if exc.code != 404:
                    log.warning("run ConfigMap unreadable; keeping the last run", error=str(exc))
                    await asyncio.sleep(interval)
                    continue
                timing, holds = NO_RUN, ()
            except ValueError as exc:
                log.warning("run ConfigMap is malformed; keeping the last run", error=str(exc))
                await asyncio.sleep(interval)
                continue
            self.update(timing=timing, holds=holds)
            await asyncio.sleep(interval)
