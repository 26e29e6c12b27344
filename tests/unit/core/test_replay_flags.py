import pytest

from simkube.core.flags import with_flags
from simkube.core.replay_flags import BYPASSED_SCHEDULER, replay_flags, skips_age_wait
from simkube.core.simtime import REAL_TIME, parse_speed

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
