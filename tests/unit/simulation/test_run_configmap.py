"""The ConfigMap sk-ctrl writes and sk-cloudprov reads: a round trip and its refusals."""

from __future__ import annotations

import pytest

from simkube.core.simtime import REAL_TIME, SpeedError, TimeScale
from simkube.simulation.run_configmap import (
    NO_RUN,
    RunKey,
    RunTiming,
    holds_data,
    read_holding,
    read_holds,
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


def test_ca_scale_down_timers_cross_in_trace_seconds_and_are_checked() -> None:
    timing = RunTiming(scale=TimeScale(10), seed=5, run="sim-r1", scale_down_unneeded_s=60.0,
                       delete_delay_after_taint_s=5.0)
    data = timescale_data(timing=timing)
    assert (data[RunKey.SCALE_DOWN_UNNEEDED], data[RunKey.DELETE_DELAY_AFTER_TAINT]) == (
        "60.0", "5.0")
    assert read_timescale(data) == timing
    assert RunKey.SCALE_DOWN_UNNEEDED not in timescale_data(timing=NO_RUN)  # unsaid: left out
    for bad in ("soon", "-1", "nan", "inf"):
        with pytest.raises(ValueError, match="scaleDownUnneeded"):
            read_timescale({RunKey.SCALE_DOWN_UNNEEDED: bad})


def test_the_speed_on_the_wire_is_read_by_the_one_rule() -> None:
    with pytest.raises(SpeedError, match="speed 2e\\+06 is above the maximum"):
        read_timescale({RunKey.SPEED: "2e6"})


def test_holds_cross_as_intervals_in_ms_and_are_checked() -> None:
    data = holds_data([(100.0, 100.25), (101.5, 102.0)])
    assert data == {RunKey.HOLDS: "100000-100250,101500-102000", RunKey.HOLDING: ""}
    assert read_holds(data) == ((100.0, 100.25), (101.5, 102.0))
    assert read_holds({}) == ()
    for bad in ("soon", "5-3", "1-", "-1-2", "1.5-2"):
        with pytest.raises(ValueError, match="holds entry"):
            read_holds({RunKey.HOLDS: bad})


def test_the_hold_in_progress_crosses_as_its_start_and_expiry_and_is_checked() -> None:
    data = holds_data([], holding=(103.25, 107.25))
    assert data == {RunKey.HOLDS: "", RunKey.HOLDING: "103250-107250"}
    assert read_holding(data) == (103.25, 107.25)
    assert read_holding(holds_data([(1.0, 2.0)])) is None
    assert read_holding({}) is None
    for bad in ("soon", "5-3", "1500", "1.5-2"):
        with pytest.raises(ValueError, match="holding entry"):
            read_holding({RunKey.HOLDING: bad})
