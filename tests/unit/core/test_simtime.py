from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest

from simkube.core import simtime
from simkube.core.simtime import MAX_SPEED, SpeedError, TimerSettings, TimeScale, parse_speed
from simkube.core.timers import BY_KEY, CATALOGUE, NEVER, Component, Timer

pytestmark = pytest.mark.unit
BACKOFF = BY_KEY["scheduler.podInitialBackoffSeconds"]
MAX_BACKOFF = BY_KEY["scheduler.podMaxBackoffSeconds"]
SCAN = BY_KEY["clusterAutoscaler.scan-interval"]
GRACE = BY_KEY["clusterAutoscaler.max-graceful-termination-sec"]


def test_conversion_both_ways() -> None:
    scale = TimeScale(10)
    assert scale.to_wall(60) == 6
    assert scale.to_trace(6) == 60


@pytest.mark.parametrize("speed", [0, -1, math.inf, math.nan])
def test_a_speed_must_be_positive_and_finite(speed: float) -> None:
    with pytest.raises(ValueError, match="positive"):
        TimeScale(speed)


def test_the_ceiling_is_part_of_the_one_rule() -> None:
    assert TimeScale(MAX_SPEED).speed == MAX_SPEED
    with pytest.raises(SpeedError, match="above the maximum 1e\\+06"):
        TimeScale(2e6)


@pytest.mark.parametrize(("given", "speed"), [(10, 10.0), (2.5, 2.5), ("2e3", 2000.0),
                                              (" 4 ", 4.0), ("1e6", MAX_SPEED)])
def test_a_speed_is_parsed_from_a_number_or_its_text(given: object, speed: float) -> None:
    assert parse_speed(given, field="--speed") == TimeScale(speed)


@pytest.mark.parametrize(("given", "message"), [
    ("2e6", "--speed 2e\\+06 is above the maximum 1e\\+06"),
    (2_000_000, "--speed 2e\\+06 is above the maximum"),
    ("fast", "--speed 'fast' is not a number"),
    (True, "--speed True is not a number"),
    (None, "--speed None is not a number"),
    (0, "--speed 0 must be a positive number"),
    ("-1", "--speed '-1' must be a positive number"),
    ("nan", "--speed 'nan' must be a positive number"),
    ("inf", "--speed 'inf' must be a positive number"),
])
def test_a_bad_speed_names_its_field(given: object, message: str) -> None:
    with pytest.raises(SpeedError, match=message) as caught:
        parse_speed(given, field="--speed")
    assert isinstance(caught.value, ValueError)  # data readers catch it as one
    assert caught.value.exit_code == 2


def test_durations_divide_exactly() -> None:
    scaled = TimeScale(20).scale(SCAN, 10_000)
    assert (scaled.wall_ms, scaled.effective_ms, scaled.floored) == (500, 10_000, False)
    assert scaled.distortion == 1.0


def test_whole_seconds_round_and_stop_at_their_minimum() -> None:
    floored = TimeScale(30).scale(GRACE, 1000)
    assert (floored.wall_ms, floored.effective_ms) == (1000, 30_000)
    assert floored.floored
    assert floored.distortion == 30
    assert ("at speed 30, clusterAutoscaler.max-graceful-termination-sec 1.0s is 30.0s of "
            "trace time") in floored.describe()
    assert "(clusterAutoscaler takes whole seconds, at least 1.0s of wall time)" \
        in floored.describe()
    rounded = TimeScale(4).scale(GRACE, 10_000)  # 2.5 s → 2 s: 8 s of trace time
    assert (rounded.wall_ms, rounded.effective_ms) == (2000, 8000)
    assert rounded.floored
    assert rounded.distortion == 0.8


def test_a_paced_timer_is_given_in_trace_time() -> None:
    # The scheduler's queue keeps the run's clock: its 1 s backoff stays 1 s of trace at
    # 30x (33 ms of wall), where divided it would have stopped at 1 s of wall (30 s of trace).
    backoff = TimeScale(30).scale(BACKOFF, 1000)
    assert (backoff.given_ms, backoff.wall_ms, backoff.effective_ms) == (1000, 33, 1000)
    assert not backoff.floored
    # Its bounds apply to the trace value it is given: whole seconds, at least one.
    rounded = TimeScale(10).scale(MAX_BACKOFF, 2500)
    assert (rounded.given_ms, rounded.effective_ms, rounded.distortion) == (2000, 2000, 0.8)
    assert "(scheduler takes whole seconds, at least 1.0s of trace time)" in rounded.describe()
    unpaced = TimeScale(10).scale(SCAN, 10_000)
    assert unpaced.given_ms == unpaced.wall_ms == 1000


def test_a_period_that_waits_for_its_work_is_shortened_by_it() -> None:
    # The HPA's cycle is its sync period plus its reconcile: at 10x the wall period leaves
    # room for the reconcile so that a cycle is 15 s + 12 ms of trace time, as in the source.
    sync = BY_KEY["controllerManager.horizontal-pod-autoscaler-sync-period"]
    assert sync.work_ms == 12
    scaled = TimeScale(10).scale(sync, 15_000)
    assert scaled.wall_ms == 1489  # 1.5 s - 10.8 ms
    assert (scaled.wall_ms + sync.work_ms) * 10 == pytest.approx(15_000 + sync.work_ms, abs=10)
    assert not scaled.floored
    assert TimeScale(1).scale(sync, 15_000).wall_ms == 15_000  # production is untouched
    # at a speed whose wall period the work would swallow, it stops at half and says why
    fast = TimeScale(2000).scale(sync, 15_000)
    assert fast.wall_ms == 4  # 7.5 ms - 12 ms would be negative: half of 7.5 ms
    assert fast.floored
    assert "adds 12ms of its own work to every cycle" in fast.describe()


def test_zero_stays_zero_unless_the_component_has_a_minimum() -> None:
    zero = TimeScale(10).scale(BY_KEY["clusterAutoscaler.new-pod-scale-up-delay"], 0)
    assert (zero.wall_ms, zero.effective_ms, zero.floored) == (0, 0, False)
    forced = TimeScale(10).scale(BACKOFF, 0)
    assert forced.distortion == math.inf


def test_the_plan_covers_the_catalogue_and_the_extras() -> None:
    extra = Timer(component=Component.CLOUDPROV, name="small.delay", default_ms=60_000)
    plan = simtime.plan(scale=TimeScale(10), settings=TimerSettings(
        values={SCAN.key: 20_000, GRACE.key: 3000}), extra=[(extra, 60_000)])
    assert len(plan.timers) == len(CATALOGUE) + 1
    assert plan.wall_ms(SCAN.key) == 2000
    assert plan.wall_ms("nodeGroups.small.delay") == 6000
    assert plan.wall_ms("clusterAutoscaler.scale-down-unneeded-time") == 60_000
    assert [t.timer.key for t in plan.distorted()] == [GRACE.key]  # 3 s -> 10 s of trace
    assert {t.timer.key for t in plan.floored()} == {GRACE.key}
    assert not simtime.plan(scale=TimeScale(10)).floored()  # production's all fit at 10x


def test_speed_one_is_production() -> None:
    plan = simtime.plan(scale=TimeScale(1))
    assert all(t.wall_ms == t.timer.default_ms for t in plan.timers)
    assert not plan.floored()


def test_flags_in_the_form_each_component_reads() -> None:
    plan = simtime.plan(scale=TimeScale(10))
    flags = plan.flags(Component.CLUSTER_AUTOSCALER)
    assert flags["scan-interval"] == "1000ms"
    assert flags["max-graceful-termination-sec"] == "60"
    scheduler = plan.flags(Component.KUBE_SCHEDULER, skip=["podInitialBackoffSeconds",
                                                            "podMaxBackoffSeconds"])
    assert scheduler == {"pod-max-in-unschedulable-pods-duration": "300000ms"}  # paced


def test_unknown_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown timers"):
        TimerSettings(values={"clusterAutoscaler.scan-intervall": 1})


CONSOLIDATE = BY_KEY["karpenter.consolidateAfter"]


def test_karpenters_batching_is_paced_and_consolidate_after_divides() -> None:
    plan = simtime.plan(scale=TimeScale(10),
                        settings=TimerSettings(values={CONSOLIDATE.key: 100_000}))
    # its batcher waits on the build's paced clock: given in trace time
    assert plan.flags(Component.KARPENTER, skip=["consolidateAfter"]) == {
        "batch-idle-duration": "1000ms", "batch-max-duration": "10000ms"}
    assert plan.wall_ms(CONSOLIDATE.key) == 10_000
    assert not [t for t in plan.floored() if t.timer.component is Component.KARPENTER]


def test_consolidate_after_is_whole_seconds_without_a_minimum() -> None:
    rounded = TimeScale(10).scale(CONSOLIDATE, 4000)  # 0.4 s → 0 s: at once
    assert (rounded.wall_ms, rounded.effective_ms, rounded.floored) == (0, 0, True)
    assert "(karpenter takes whole seconds of wall time)" in rounded.describe()
    assert TimeScale(10).scale(CONSOLIDATE, 0).floored is False


def test_never_stays_never_at_every_speed() -> None:
    scaled = TimeScale(50).scale(CONSOLIDATE, NEVER)
    assert (scaled.wall_ms, scaled.effective_ms, scaled.floored) == (NEVER, NEVER, False)
    assert scaled.to_status()["traceTime"] == scaled.to_status()["wallTime"] == "Never"
    assert scaled.describe() == "karpenter.consolidateAfter Never (wall Never)"
    with pytest.raises(ValueError, match="negative timers"):
        TimerSettings(values={SCAN.key: NEVER})  # only where the component takes "Never"


def test_environment_defaults_fill_only_what_the_simulation_leaves_unset() -> None:
    env = {CONSOLIDATE.key: 300_000}
    assert TimerSettings().with_defaults(env).trace_ms(CONSOLIDATE) == 300_000
    own = TimerSettings(values={CONSOLIDATE.key: 60_000}).with_defaults(env)
    assert own.trace_ms(CONSOLIDATE) == 60_000
    assert TimerSettings().trace_ms(CONSOLIDATE) == 0  # no environment: Karpenter's own
    assert [t.key for t in CATALOGUE if t.from_environment] == [CONSOLIDATE.key]


def test_no_module_but_simtime_scales_by_the_speed_itself() -> None:
    """One notion of time: a ``* speed`` or ``/ speed`` anywhere else is a second conversion
    that can drift from this one (rounding, floors), so every caller goes through TimeScale."""
    package = Path(simtime.__file__).parents[1]
    found = []
    for path in sorted(package.rglob("*.py")):
        if path.name == "simtime.py" or "gen" in path.relative_to(package).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult | ast.Div):
                for side in (node.left, node.right):
                    name = (side.id if isinstance(side, ast.Name) else
                            side.attr if isinstance(side, ast.Attribute) else "")
                    if "speed" in name:
                        found.append(f"{path.relative_to(package)}:{node.lineno} "
                                     f"{ast.unparse(node)}")
    assert found == []


def _presence_check(node: ast.Compare) -> bool:
    """``speed is None``, ``request.speed != 0``: whether a speed was given at all (proto3's
    zero is "unset"), not a rule about its value."""
    return (all(isinstance(op, ast.Is | ast.IsNot | ast.Eq | ast.NotEq) for op in node.ops)
            and any(isinstance(side, ast.Constant) and side.value in (None, 0)
                    for side in (node.left, *node.comparators)))


def test_no_module_but_simtime_checks_or_builds_a_speed() -> None:
    """One rule for a speed: a comparison of a speed, or a ``TimeScale`` built from a variable,
    anywhere else is a second rule (or a second parse) that can drift from ``parse_speed``;
    other modules take the ``TimeScale`` they are given or parse with ``parse_speed``."""
    package = Path(simtime.__file__).parents[1]
    found = []
    for path in sorted(package.rglob("*.py")):
        if path.name == "simtime.py" or "gen" in path.relative_to(package).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            names = []
            if isinstance(node, ast.Compare) and not _presence_check(node):
                names = [node.left, *node.comparators]
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                  and node.func.id == "TimeScale"):
                names = [arg for arg in node.args if not isinstance(arg, ast.Constant)]
                names += [kw.value for kw in node.keywords
                          if not isinstance(kw.value, ast.Constant)]
                if names:
                    found.append(f"{path.relative_to(package)}:{node.lineno} "
                                 f"{ast.unparse(node)}")
                continue
            for side in names:
                name = (side.id if isinstance(side, ast.Name) else
                        side.attr if isinstance(side, ast.Attribute) else "")
                if "speed" in name:
                    found.append(f"{path.relative_to(package)}:{node.lineno} "
                                 f"{ast.unparse(node)}")
    assert found == []


def test_achieved_speed_leaves_pauses_out_and_holds_in() -> None:
    assert simtime.achieved_speed(trace_s=100, wall_s=10) == 10
    assert simtime.achieved_speed(trace_s=100, wall_s=15, paused_s=5) == 10
    assert simtime.achieved_speed(trace_s=0, wall_s=5, paused_s=5) is None


def test_a_held_run_goes_at_real_time_and_slips_by_the_rest() -> None:
    fast = TimeScale(20.0)
    assert fast.held_speed == 1.0
    assert fast.held_share == pytest.approx(0.05)
    assert fast.hold_slip(2.0) == pytest.approx(1.9)  # 2 s held: 38 s of trace not replayed
    assert fast.to_wall(3.0, held=True) == 3.0
    assert fast.to_trace(0.5, held=True) == 0.5
    slow = TimeScale(0.5)  # slower than real time: a hold changes nothing
    assert (slow.held_speed, slow.held_share, slow.hold_slip(4.0)) == (0.5, 1.0, 0.0)
