"""The ConfigMap sk-ctrl writes and sk-cloudprov reads: a round trip and its refusals."""

from __future__ import annotations

import pytest

from simkube.core.simtime import REAL_TIME, SpeedError, TimeScale
from simkube.simulation.run_configmap import (
    NO_RUN,
    RunKey,
    RunTiming,
    held_data,
    read_held,
    read_timescale,
    timescale_data,
)

pytestmark = pytest.mark.unit


def test_the_run_configmap_round_trips_and_refuses_garbage() -> None:
    timing = RunTiming(scale=TimeScale(12.5), seed=7, run="sim-r1")
    data = timescale_data(timing=timing)
    assert data == {"speed": "12.5", "seed": "7", "run": "sim-r1"}
    assert read_timescale(data) == timing
    assert read_timescale({}) == NO_RUN == RunTiming(scale=REAL_TIME, seed=0, run="")
    with pytest.raises(ValueError, match="speed"):
        read_timescale({"speed": "-3"})
    with pytest.raises(ValueError, match="seed"):
        read_timescale({"speed": "2", "seed": "x"})


def test_the_speed_on_the_wire_is_read_by_the_one_rule() -> None:
    with pytest.raises(SpeedError, match="speed 2e\\+06 is above the maximum"):
        read_timescale({RunKey.SPEED: "2e6"})


def test_held_seconds_cross_as_text_and_are_checked() -> None:
    assert held_data(held_s=1.23456) == {RunKey.HELD: "1.235"}
    assert read_held(held_data(held_s=2.5)) == 2.5
    assert read_held({}) == 0.0
    for bad in ("soon", "-1", "nan", "inf"):
        with pytest.raises(ValueError, match="heldSeconds"):
            read_held({RunKey.HELD: bad})
