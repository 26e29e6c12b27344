"""Before each run: node groups read (the Simulation's or sk-ctrl's), timers scaled and
recorded, groups reset to their minimum; everything put back when the simulation ends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from simkube.cloudprov.naming import GROUP_LABEL
from simkube.core.kubeapi import ApiError
from simkube.core.simtime import TimerSettings, TimeScale
from simkube.ctrl import preparing
from simkube.ctrl.retrying import SimulationFailedError
from simkube.simulation.run_configmap import RUN_CONFIGMAP
from tests.support.fake_api import FakeApi
from tests.unit.ctrl.fakes import FakeDriver, context, events, simulation, status_writes

pytestmark = pytest.mark.unit
GROUPS_FILE = Path(__file__).resolve().parents[3] / "services/simkube/env/services/node-groups.yaml"
DEPLOYMENTS = "/apis/apps/v1/namespaces/sk-cloudprov/deployments"
CONFIGMAP = f"/api/v1/namespaces/sk-cloudprov/configmaps/{RUN_CONFIGMAP}"


def nodes(**per_group: int) -> list[dict[str, Any]]:
    return [{"metadata": {"name": f"{group}-{i}", "labels": {GROUP_LABEL: group}}}
            for group, count in per_group.items() for i in range(count)]


class Target:
    description = "test target"

    def __init__(self, api: FakeApi | None = None) -> None:
        self.applied: list[tuple[float, str]] = []
        self.restored = 0
        self.api = api
        self.requests_before_apply = -1  # how many API requests came before the restart

    async def environment_timers(self) -> dict[str, int]:
        return {}

    async def apply(self, *, scale: TimeScale, settings: TimerSettings, run: str,
                    run_configmap: str = "", gated: bool = False) -> None:
        self.applied.append((scale.speed, run))
        self.run_configmap = run_configmap
        if self.api is not None:
            self.requests_before_apply = len(self.api.bodies)

    async def skips_age_wait(self, *, scale: TimeScale) -> bool:
        return scale.faster_than_real_time

    async def restore(self) -> None:
        self.restored += 1


async def test_no_node_groups_anywhere(tmp_path: Path) -> None:
    ctx = context(FakeApi(), FakeDriver(), tmp_path)
    assert await preparing.node_groups(ctx, ctx.spec()) is None


async def test_sk_ctrls_node_groups_unless_the_simulation_names_its_own(tmp_path: Path) -> None:
    ctx = context(FakeApi(), FakeDriver(), tmp_path, node_groups=str(GROUPS_FILE))
    config = await preparing.node_groups(ctx, ctx.spec())
    assert config is not None
    assert set(config.groups) == {"small", "large"}
    ctx.update(simulation(spec={"nodeGroups": {"config": str(tmp_path / "absent.yaml")}}))
    with pytest.raises(SimulationFailedError, match=r"absent\.yaml"):
        await preparing.node_groups(ctx, ctx.spec())


async def test_prepare_scales_timers_and_resets_the_groups(tmp_path: Path) -> None:
    api = FakeApi(lists={"/api/v1/nodes": nodes(small=2, large=1),
                         "/api/v1/namespaces/sk-cloudprov/pods": nodes(small=2, large=1)})
    target = Target(api)
    ctx = context(api, FakeDriver(), tmp_path, node_groups=str(GROUPS_FILE),
                  timer_target=target, sim=simulation(spec={"speed": 10}))
    spec = ctx.spec()
    config = await preparing.node_groups(ctx, spec)
    steps: list[str] = []

    async def step(doing: str) -> None:
        steps.append(doing)
    gated = await preparing.prepare(ctx, spec=spec, config=config, number=1, name="shop-r1",
                                    step=step)
    assert gated is False  # no autoscaler metrics: the run does not hold, so nothing gates
    assert steps == ["resetting the node groups to their minimum",
                     "restarting components with the run's timers"]
    assert target.applied == [(10.0, "shop-r1")]
    # Where the run's holds go, for an autoscaler that follows them (Karpenter's clocks).
    assert target.run_configmap == "sk-cloudprov/simkube-run-timescale"
    timers = status_writes(api)[-1]["timers"]
    assert timers["appliedTo"] == "test target"
    published = api.sent("PUT", CONFIGMAP)[0]["data"]  # the speed, for sk-cloudprov
    assert (published["speed"], published["run"]) == ("10.0", "shop-r1")
    assert "ageWait" not in published  # the wait is played by the scale-up gate now
    assert {(p, b["spec"]["replicas"]) for p, b in
            ((p, b) for m, p, b in api.bodies if m == "PATCH" and p.startswith(DEPLOYMENTS))
            } == {(f"{DEPLOYMENTS}/small", 2), (f"{DEPLOYMENTS}/large", 1)}
    # The groups are reset before CA restarts with the timers, so its instance cache starts
    # from the reset groups.
    resets = [i for i, (m, p, _) in enumerate(api.bodies) if m == "PATCH"
              and p.startswith(DEPLOYMENTS)]
    assert max(resets) < target.requests_before_apply
    floored = [m for _, reason, m in events(api) if reason == "TimerFloored"]
    assert floored == [f"run 1: {w}" for w in timers["warnings"]]


async def test_without_a_timer_target_a_fast_run_is_warned_about(tmp_path: Path) -> None:
    api = FakeApi()
    ctx = context(api, FakeDriver(), tmp_path, sim=simulation(spec={"speed": 10}))
    await preparing.prepare(ctx, spec=ctx.spec(), config=None, number=2, name="shop-r2")
    warnings = [e for e in events(api) if e[1] == "TimerFloored"]
    assert {kind for kind, _, _ in warnings} == {"Warning"}
    assert warnings[-1][2].startswith("run 2: at speed 10 the autoscaler")


async def test_a_group_that_cannot_be_reset_fails_the_simulation(tmp_path: Path) -> None:
    api = FakeApi()
    api.fail("PATCH", f"{DEPLOYMENTS}/small", ApiError(code=404, reason="NotFound",
                                                       message="no deployment"))
    ctx = context(api, FakeDriver(), tmp_path, node_groups=str(GROUPS_FILE))
    spec = ctx.spec()
    config = await preparing.node_groups(ctx, spec)
    with pytest.raises(SimulationFailedError, match="is sk-cloudprov running"):
        await preparing.prepare(ctx, spec=spec, config=config, number=1, name="shop-r1")


async def test_no_reset_when_the_simulation_says_so(tmp_path: Path) -> None:
    api = FakeApi()
    ctx = context(api, FakeDriver(), tmp_path, node_groups=str(GROUPS_FILE),
                  sim=simulation(spec={"nodeGroups": {"resetBeforeRun": False}}))
    spec = ctx.spec()
    await preparing.prepare(ctx, spec=spec, config=await preparing.node_groups(ctx, spec),
                            number=1, name="shop-r1")
    assert not [p for m, p in api.requests if m == "PATCH" and p.startswith(DEPLOYMENTS)]


async def test_restore_withdraws_the_speed_and_restores_the_target(tmp_path: Path) -> None:
    api, target = FakeApi(), Target()
    ctx = context(api, FakeDriver(), tmp_path, node_groups=str(GROUPS_FILE),
                  timer_target=target)
    await preparing.restore(ctx)
    assert ("DELETE", CONFIGMAP) in api.requests
    assert target.restored == 1
