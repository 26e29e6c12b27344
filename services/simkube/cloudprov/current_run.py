"""The Simulation run in progress as sk-cloudprov sees it: its speed and seed, for our timers.

Provisioning delays and per-group option durations in the node-groups file are trace time
(what a real cloud takes). A run at speed *s* must see them *s* times shorter in wall time,
or node arrivals — and so the autoscaler's whole behaviour — would depend on the speed the
user picked. sk-ctrl publishes the run's speed and seed in a ConfigMap
(``simulation.run_configmap``) at the start of every run and removes it at the end; this
module watches it, so a restarted sk-cloudprov picks the current run up at once. (It was
``RunTimescale``; ``TimeScale`` now means only the conversion in ``core.simtime``, which this
object carries.)

Provisioning and readiness delays count on the run's clock. While sk-ctrl holds the replay
for the autoscaler, trace time moves at the held speed (``TimeScale.held_speed``, real time)
rather than the run's, so a deadline that falls in a hold passes a wall second per trace
second, and an instance's deadline moves back by the slip of the holds after it was
requested (``slip_since``: the hold time after the request, the hold in progress included,
times the share of the run's pace it lost). The part of a hold before the request does not
count: CA plans inside the loop a hold waits for, so the first instances of a scale-up are
requested mid-hold. sk-ctrl publishes a hold as it starts and again as it ends, and a watch
brings each change here in milliseconds: a deadline that passes before the start arrives
(tens of milliseconds) is the only wall time counted at the wrong pace. ``listeners`` hear
of every change to the holds, so waiting instances are looked at again when a hold ends.
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
        """The run is held now: its clock moves at the held speed."""
        return self.holding_now is not None and time.time() < self.holding_now[1]

    def held_since(self, since: float, *, now: float | None = None) -> float:
        """Wall seconds the run was held after Unix time ``since`` (an instance's request),
        the hold in progress up to ``now`` included."""
        held = sum(max(0.0, end - max(start, since)) for start, end in self.holds)
        if self.holding_now is not None:
            start, expiry = self.holding_now
            current = min(time.time() if now is None else now, expiry)
            held += max(0.0, current - max(start, since))
        return held

    def slip_since(self, since: float, *, now: float | None = None) -> float:
        """How far the holds after Unix time ``since`` moved the run's schedule back, in wall
        seconds: how far an instance's deadline moves."""
        return self.timing.scale.hold_slip(self.held_since(since, now=now))

    def due_at(self, *, since: float, wall: float, now: float) -> float:
        """The Unix time at which ``wall`` seconds at the run's pace since Unix time ``since``
        will have passed, as known at ``now``: with the holds after ``since`` slipped, and a
        hold in progress taken to last until its expiry (its end brings the time forward).
        At or before ``now`` means due."""
        hold = self.holding_now
        if hold is not None and now >= hold[1]:
            hold = None  # expired: sk-ctrl died mid-hold; held_since counts it to its expiry
        due = since + wall + self.slip_since(since, now=hold[0] if hold else now)
        if hold is None or due <= hold[0]:
            # Overdue when the hold began (a late wake, or back-to-back holds whose end and
            # start came in one update): due now, not once the hold ends.
            return due
        scale = self.timing.scale
        began = max(hold[0], since)  # a request made mid-hold counts from itself
        in_hold = began + (due - began) / scale.held_share  # the hold's slower pace
        if in_hold <= hold[1]:
            return in_hold
        return due + scale.hold_slip(hold[1] - began)  # the rest of the hold, then the run's

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
