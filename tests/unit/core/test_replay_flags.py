import pytest

from simkube.core.flags import with_flags
from simkube.core.replay_flags import (
    BYPASSED_SCHEDULER,
    GATED_SCAN_MS,
    replay_flags,
    run_flags,
    skips_age_wait,
)
from simkube.core.simtime import REAL_TIME, parse_speed, plan

pytestmark = pytest.mark.unit
BASE = ["/bin/cluster-autoscaler", "--cloud-provider=externalgrpc", "--scan-interval=10s"]


def test_real_time_keeps_the_pod_age_wait() -> None:
    assert replay_flags(scale=REAL_TIME, argv=BASE) == {}
    assert replay_flags(scale=parse_speed(0.5, field="speed"), argv=BASE) == {}


def test_faster_runs_bypass_the_scheduler_and_loop_on_the_scan_alone() -> None:
    flags = replay_flags(scale=parse_speed(20, field="speed"), argv=BASE)
    assert flags == {"bypassed-scheduler-names": "default-scheduler",
                     "frequent-loops-enabled": "false"}
    assert with_flags(BASE, flags=flags)[-2:] == [
        "--frequent-loops-enabled=false", f"--bypassed-scheduler-names={BYPASSED_SCHEDULER}"]
    assert skips_age_wait(scale=parse_speed(20, field="speed"), argv=BASE)
    assert not skips_age_wait(scale=REAL_TIME, argv=BASE)


def test_allowed_schedulers_are_extended_or_ca_refuses_to_start() -> None:
    argv = [*BASE, "--allowed-scheduler-names=default-scheduler,batch"]
    flags = replay_flags(scale=parse_speed(10, field="speed"), argv=argv)
    assert "allowed-scheduler-names" not in flags  # default-scheduler is allowed already
    argv = [*BASE, "--allowed-scheduler-names=batch"]
    flags = replay_flags(scale=parse_speed(10, field="speed"), argv=argv)
    assert flags["allowed-scheduler-names"] == f"batch,{BYPASSED_SCHEDULER}"


def test_a_users_own_bypass_is_left_alone() -> None:
    argv = [*BASE, "--bypassed-scheduler-names=volcano"]
    assert replay_flags(scale=parse_speed(10, field="speed"), argv=argv) == {
        "frequent-loops-enabled": "false"}
    # No production wait to put back: the user's CA never had it.
    assert not skips_age_wait(scale=parse_speed(10, field="speed"), argv=argv)


def test_a_users_own_loop_setting_is_left_alone() -> None:
    argv = [*BASE, "--frequent-loops-enabled=true"]
    flags = replay_flags(scale=parse_speed(10, field="speed"), argv=argv)
    assert flags == {"bypassed-scheduler-names": BYPASSED_SCHEDULER}


def test_a_gated_run_scans_on_the_gated_cadence_at_most() -> None:
    # 10 s ÷ 10 is 1 s of wall time: each gate moment's hold would wait up to that for a loop.
    scaled = plan(scale=parse_speed(10, field="speed"))
    flags = run_flags(plan=scaled, argv=BASE, gated=True)
    assert flags["scan-interval"] == f"{GATED_SCAN_MS}ms"
    assert flags["scale-down-unneeded-time"] == "60000ms"  # the other timers are the plan's
    assert flags["bypassed-scheduler-names"] == BYPASSED_SCHEDULER  # and the replay's flags
    # Not gated (holding off), CA's own scan plays production's moments: the plan's value.
    assert run_flags(plan=scaled, argv=BASE, gated=False)["scan-interval"] == "1000ms"
    # Already shorter at 50x (200 ms): kept.
    fast = plan(scale=parse_speed(50, field="speed"))
    assert run_flags(plan=fast, argv=BASE, gated=True)["scan-interval"] == "200ms"


def test_real_time_runs_are_never_given_the_gated_cadence() -> None:
    flags = run_flags(plan=plan(scale=REAL_TIME), argv=BASE, gated=False)
    assert flags["scan-interval"] == "10000ms"
    assert "bypassed-scheduler-names" not in flags
