"""The run in progress, as sk-ctrl publishes it for sk-cloudprov: one ConfigMap.

sk-cloudprov scales its own timers (provisioning delays, per-group option durations) and
draws its jitter, so it must know the speed and seed of the Simulation run in progress.
sk-ctrl writes them into a ConfigMap in sk-cloudprov's namespace when a run starts and
deletes it when the Simulation ends; absent means a ground-truth run, or none at all.
Both sides import this module, so the name, the keys and their text forms are written
once. The ConfigMap is a wire: the speed crosses it as text and is read back through the one
speed rule (``core.simtime.parse_speed``).
"""

from __future__ import annotations

from collections.abc import Mapping
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


@dataclass(frozen=True, kw_only=True)
class RunTiming:
    """The speed and seed of one run, as the ConfigMap carries them."""

    scale: TimeScale = REAL_TIME
    seed: int = 0
    run: str = ""


NO_RUN = RunTiming()  # what an absent ConfigMap means


def timescale_data(*, timing: RunTiming) -> dict[str, str]:
    """The ConfigMap's ``data`` for ``timing``."""
    return {RunKey.SPEED: repr(float(timing.scale.speed)), RunKey.SEED: str(timing.seed),
            RunKey.RUN: timing.run}


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
    return RunTiming(scale=scale, seed=seed, run=str(data.get(RunKey.RUN, "")))
