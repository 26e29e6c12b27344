"""The run in progress, as sk-ctrl publishes it for sk-cloudprov: one ConfigMap.

sk-cloudprov scales its own timers (provisioning delays, per-group option durations) and
draws its jitter, so it must know the speed and seed of the Simulation run in progress.
sk-ctrl writes them into a ConfigMap in sk-cloudprov's namespace when a run starts and
deletes it when the Simulation ends; absent means a ground-truth run, or none at all. During
a run it also carries the time the run's clock was held for the autoscaler.
Both sides import this module, so the name, the keys and their text forms are written
once. The ConfigMap is a wire: the speed crosses it as text and is read back through the one
speed rule (``core.simtime.parse_speed``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from simkube.core.simtime import REAL_TIME, TimeScale, parse_speed

RUN_CONFIGMAP = "simkube-run-timescale"


class RunKey(StrEnum):
    """The ConfigMap's data keys."""

    SPEED = "speed"  # trace seconds per wall second, as Python's repr of a float
    SEED = "seed"  # the Simulation's seed: the same draws in every run of it
    RUN = "run"  # the driver's run name, so a new run starts its draws over
    # The run's recent holds for the autoscaler, as wall-clock intervals ("start-end" in Unix
    # ms, comma-separated, oldest first): a provisioning deadline moves back by the held time
    # that overlaps it, so a node's delay counts on the run's clock. Intervals rather than a
    # total, because an instance requested in the middle of a hold (CA plans inside the loop
    # a hold waits for) must not count the part of it that came before. sk-ctrl merge-patches
    # it after each hold.
    HOLDS = "holds"
    # The hold in progress as "start-expiry" (Unix ms; the expiry is when sk-driver ends it by
    # itself, should sk-ctrl die mid-hold), "" when the clock runs. Published as the hold
    # starts, so sk-cloudprov's deadlines pass at real time while the run is held (and move
    # back by the hold's slip once it has ended).
    HOLDING = "holding"
    # Cluster Autoscaler's scale-down-unneeded-time and node-delete-delay-after-taint as the
    # run gives them, in trace seconds (Python's repr of a float): what CA's wait from finding
    # a node unneeded to deleting it means on the run's clock (cloudprov/reconciling.py).
    SCALE_DOWN_UNNEEDED = "scaleDownUnneeded"
    DELETE_DELAY_AFTER_TAINT = "deleteDelayAfterTaint"


@dataclass(frozen=True, kw_only=True)
class RunTiming:
    """The speed and seed of one run, and the CA timers sk-cloudprov needs, as the ConfigMap
    carries them."""

    scale: TimeScale = REAL_TIME
    seed: int = 0
    run: str = ""
    scale_down_unneeded_s: float | None = None  # None: the run does not say
    delete_delay_after_taint_s: float | None = None


NO_RUN = RunTiming()  # what an absent ConfigMap means


def timescale_data(*, timing: RunTiming) -> dict[str, str]:
    """The ConfigMap's ``data`` for ``timing``."""
    data: dict[str, str] = {RunKey.SPEED: repr(float(timing.scale.speed)),
                            RunKey.SEED: str(timing.seed),
                            RunKey.RUN: timing.run}
    for key, seconds in ((RunKey.SCALE_DOWN_UNNEEDED, timing.scale_down_unneeded_s),
                         (RunKey.DELETE_DELAY_AFTER_TAINT, timing.delete_delay_after_taint_s)):
        if seconds is not None:
            data[key] = repr(float(seconds))
    return data


def _seconds(data: Mapping[str, Any], key: RunKey) -> float | None:
    """A duration key's trace seconds, None when absent; ``ValueError`` naming the key."""
    text = data.get(key)
    if text is None:
        return None
    try:
        seconds = float(text)
    except (TypeError, ValueError):
        raise ValueError(f"{key} {text!r} is not a number of seconds") from None
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"{key} {text!r} is not a number of seconds of at least 0")
    return seconds


def read_timescale(data: Mapping[str, Any]) -> RunTiming:
    """The run in the ConfigMap's ``data``; ``ValueError`` naming the bad key.

    Keys left out take the ground-truth values, so an empty ConfigMap means speed 1.
    """
    scale = parse_speed(data.get(RunKey.SPEED, 1.0), field=RunKey.SPEED)
    try:
        seed = int(data.get(RunKey.SEED, 0))
    except (TypeError, ValueError):
        raise ValueError(f"{RunKey.SEED} {data.get(RunKey.SEED)!r} is not a whole "
                         "number") from None
    return RunTiming(scale=scale, seed=seed, run=str(data.get(RunKey.RUN, "")),
                     scale_down_unneeded_s=_seconds(data, RunKey.SCALE_DOWN_UNNEEDED),
                     delete_delay_after_taint_s=_seconds(data, RunKey.DELETE_DELAY_AFTER_TAINT))


Hold = tuple[float, float]  # (start, end), Unix seconds of the wall clock


def _interval(hold: Hold) -> str:
    return f"{round(hold[0] * 1000)}-{round(hold[1] * 1000)}"


def holds_data(holds: Sequence[Hold], *, holding: Hold | None = None) -> dict[str, str]:
    """The ConfigMap's ``data`` entries for ``holds`` and the hold in progress (start,
    expiry), if any (a merge patch leaves the rest)."""
    return {RunKey.HOLDS: ",".join(_interval(hold) for hold in holds),
            RunKey.HOLDING: "" if holding is None else _interval(holding)}


def _parse(entry: str, key: str) -> Hold:
    start, dash, end = entry.partition("-")
    if not (dash and start.isdigit() and end.isdigit()) or int(end) < int(start):
        raise ValueError(f"{key} entry {entry!r} is not 'start-end' in Unix ms "
                         "with the end not before the start")
    return int(start) / 1000, int(end) / 1000


def read_holding(data: Mapping[str, Any]) -> Hold | None:
    """The hold in progress (start, expiry; Unix seconds), None when none is; ``ValueError``
    naming the key when it is not two whole numbers of ms."""
    text = str(data.get(RunKey.HOLDING) or "").strip()
    return _parse(text, RunKey.HOLDING) if text else None


def read_holds(data: Mapping[str, Any]) -> tuple[Hold, ...]:
    """The holds in the ConfigMap's ``data``; none when absent, ``ValueError`` naming the key
    when an entry is not two whole numbers of ms with the end not before the start."""
    text = str(data.get(RunKey.HOLDS) or "").strip()
    holds: list[Hold] = []
    for entry in filter(None, (part.strip() for part in text.split(","))):
        holds.append(_parse(entry, RunKey.HOLDS))
    return tuple(holds)
