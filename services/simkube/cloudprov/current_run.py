"""The Simulation run in progress as sk-cloudprov sees it: its speed and seed, for our timers.

Provisioning delays and per-group option durations in the node-groups file are trace time
(what a real cloud takes). A run at speed *s* must see them *s* times shorter in wall time,
or node arrivals — and so the autoscaler's whole behaviour — would depend on the speed the
user picked. sk-ctrl publishes the run's speed and seed in a ConfigMap
(``simulation.run_configmap``) at the start of every run and removes it at the end; this
module watches it, so a restarted sk-cloudprov picks the current run up at once. (It was
``RunTimescale``; ``TimeScale`` now means only the conversion in ``core.simtime``, which this
object carries.)

Provisioning and readiness delays count on the run's clock: while sk-ctrl holds the replay
for the autoscaler, trace time stands still, so no deadline passes during a hold (what was
overdue when it began happens during it, at the trace instant it stands at), and an
instance's deadline moves back by the held time after it was requested
(``held_since``: the overlap of the holds, the one in progress included, with the time
since). The part of a hold before the request does not count: CA plans inside the loop a
hold waits for, so the first instances of a scale-up are requested mid-hold. sk-ctrl
publishes a hold as it starts and again as it ends, and a watch brings each change here in
milliseconds: a deadline that passes before the start arrives (tens of milliseconds) is the
only wall time left uncounted. ``listeners`` hear of every change to the holds, so waiting
instances are looked at again when a hold ends.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import Any

from simkube.core.kubeapi import CONFIG_MAPS, KubeClient, ListWatch
from simkube.core.logs import get_logger
from simkube.core.simtime import TimeScale
from simkube.simulation.run_configmap import (
    NO_RUN,
    RUN_CONFIGMAP,
    Hold,
    RunTiming,
    read_holding,
    read_holds,
    read_timescale,
)

log = get_logger(__name__)


class CurrentRun:
    """The run's ``RunTiming``, and the jitter draws it keys by its seed."""

    def __init__(self, *, timing: RunTiming = NO_RUN) -> None:
        self.timing = timing
        self.holds: tuple[Hold, ...] = ()  # the run's recent holds, as published
        # The hold in progress, (start, expiry) in Unix s: sk-driver ends it by itself at the
        # expiry should sk-ctrl die mid-hold, and so does this view of it.
        self.holding_now: Hold | None = None
        self.listeners: list[Callable[[], None]] = []  # told when the holds change
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

    @property
    def holding(self) -> bool:
        """The run's clock stands still now: no deadline passes."""
        return self.holding_now is not None and time.time() < self.holding_now[1]

    def held_since(self, since: float, *, now: float | None = None) -> float:
        """Wall seconds the run's clock was held after Unix time ``since`` (an instance's
        request), the hold in progress up to ``now`` included: how far its deadline moves."""
        held = sum(max(0.0, end - max(start, since)) for start, end in self.holds)
        if self.holding_now is not None:
            start, expiry = self.holding_now
            current = min(time.time() if now is None else now, expiry)
            held += max(0.0, current - max(start, since))
        return held

    def held_at(self, at: float) -> bool:
        """Whether the run's clock stood still at Unix time ``at``, as far as known yet."""
        if any(start <= at <= end for start, end in self.holds):
            return True
        return self.holding_now is not None and self.holding_now[0] <= at <= min(
            time.time(), self.holding_now[1])

    def update(self, *, timing: RunTiming, holds: tuple[Hold, ...] | None = None,
               holding: Hold | None = None) -> bool:
        """Take the ConfigMap's values; True when the run changed (draws start over)."""
        before = (self.holds, self.holding_now)
        if holds is not None:
            self.holds = holds
        self.holding_now = holding
        changed = timing != self.timing
        if changed:
            self.timing = timing
            self._ordinals.clear()
            self._counts.clear()
            self.holds = holds or ()
            log.info("run in progress", speed=timing.scale.speed, seed=timing.seed,
                     run=timing.run or None)
        if (self.holds, self.holding_now) != before:
            for listener in self.listeners:
                listener()
        return changed

    def _take(self, configmap: dict[str, Any] | None) -> None:
        """The ConfigMap's state (None: absent, so no run); a malformed one is kept out."""
        data = (configmap or {}).get("data") or {}
        try:
            timing, holds, holding = read_timescale(data), read_holds(data), read_holding(data)
        except ValueError as exc:
            log.warning("run ConfigMap is malformed; keeping the last run", error=str(exc))
            return
        self.update(timing=timing, holds=holds, holding=holding)

    async def follow(self, *, api: KubeClient, namespace: str) -> None:
        """Keep up with the run ConfigMap in ``namespace`` until cancelled."""
        def listed(items: list[dict[str, Any]]) -> None:
            self._take(items[0] if items else None)

        def changed(kind: str, configmap: dict[str, Any]) -> None:
            self._take(None if kind == "DELETED" else configmap)
        watch = ListWatch(kube=api, path=CONFIG_MAPS.path(namespace=namespace),
                          what="the run ConfigMap", on_list=listed, on_event=changed,
                          query={"fieldSelector": f"metadata.name={RUN_CONFIGMAP}"})
        await watch.run()
