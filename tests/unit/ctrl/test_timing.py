"""What a run's status says about its timers when the environment chose some of them."""

from __future__ import annotations

from typing import Any, cast

import pytest

from simkube.core.kubeapi import KubeClient
from simkube.core.simtime import TimerSettings, TimeScale
from simkube.core.timers import NEVER, replay_defaults
from simkube.ctrl.timing import loop_wait_s, prepare_timers, provision_time_s
from simkube.simulation.spec import SimulationSpec

pytestmark = pytest.mark.unit
KEY = "karpenter.consolidateAfter"


class FakeTarget:
    description = "fake"

    def __init__(self, own: dict[str, int]) -> None:
        self.own = own
        self.applied: list[TimerSettings] = []
        self.gated: list[bool] = []

    async def environment_timers(self) -> dict[str, int]:
        return self.own

    async def apply(self, *, scale: TimeScale, settings: TimerSettings, run: str,
                    run_configmap: str = "", gated: bool = False) -> None:
        self.applied.append(settings)
        self.gated.append(gated)

    async def skips_age_wait(self, *, scale: TimeScale) -> bool:
        return scale.faster_than_real_time

    async def restore(self) -> None:
        pass


def spec(values: dict[str, int]) -> SimulationSpec:
    return cast(SimulationSpec, type("Spec", (), {
        "scale": TimeScale(10.0), "seed": 1, "timers": TimerSettings(values=values)})())


def value(status: dict[str, Any]) -> dict[str, Any]:
    return next(v for v in status["values"] if v["timer"] == KEY)


@pytest.mark.parametrize(("asked", "own", "trace", "wall"), [
    ({}, {KEY: 300_000}, "5m00s", "30.0s"),  # the environment's 5 m, ÷ 10
    ({KEY: 100_000}, {KEY: 300_000}, "1m40s", "10.0s"),  # the Simulation's wins
    ({}, {KEY: NEVER}, "Never", "Never"),
    ({}, {}, "0ms", "0ms"),  # no environment value: Karpenter's own 0 s
])
async def test_the_environment_fills_what_the_simulation_leaves_unset(
        asked: dict[str, int], own: dict[str, int], trace: str, wall: str) -> None:
    target = FakeTarget(own)
    timers = await prepare_timers(cast(KubeClient, None), target=target, spec=spec(asked),
                                  config=None, run="r1")
    shown = value(timers.status)
    assert (shown["traceTime"], shown["wallTime"]) == (trace, wall)
    # apply gets the same values, over a replay's own defaults (metrics-server's resolution)
    assert dict(target.applied[0].values) == {**replay_defaults(), **own, **asked}


@pytest.mark.parametrize(("timer", "replay", "asked", "given"), [
    # a replay scrapes usage faster than production ...
    ("metricsServer.metric-resolution", "2.0s", 15_000, "15.0s"),
    # ... and counts new pods as late as the source did, unless the Simulation says otherwise
    ("metricsServer.min-window", "22.5s", 0, "0ms"),
])
async def test_a_replays_own_default_applies_unless_asked(timer: str, replay: str, asked: int,
                                                          given: str) -> None:
    for settings, trace in (({}, replay), ({timer: asked}, given)):
        timers = await prepare_timers(cast(KubeClient, None), target=FakeTarget({}),
                                      spec=spec(settings), config=None, run="r1")
        shown = next(v for v in timers.status["values"] if v["timer"] == timer)
        assert shown["traceTime"] == trace


def test_a_replays_ca_may_take_two_scans_of_wall_time_to_start_a_loop() -> None:
    assert loop_wait_s(spec({})) == 2.0  # production's 10 s scan at speed 10
    assert loop_wait_s(spec({"clusterAutoscaler.scan-interval": 30_000})) == 6.0


def test_the_gate_lets_planned_pods_go_after_cas_provision_time_in_trace_time() -> None:
    assert provision_time_s(spec({})) == 900.0
    assert provision_time_s(spec({"clusterAutoscaler.max-node-provision-time": 60_000})) == 60.0


async def test_a_held_run_whose_ca_skips_the_age_wait_gates_its_pods() -> None:
    for holding, target, gates in ((True, FakeTarget({}), True), (False, FakeTarget({}), False),
                                   (True, None, False)):
        timers = await prepare_timers(cast(KubeClient, None), target=target, spec=spec({}),
                                      config=None, run="r1", holding=holding)
        assert timers.gates_scale_up is gates
        if target is not None:  # CA is started on the gated cadence exactly when gated
            assert target.gated == [gates]
