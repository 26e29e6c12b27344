import pytest

from simkube.core.flags import with_flags
from simkube.core.replay_flags import BYPASSED_SCHEDULER, replay_flags
from simkube.core.simtime import REAL_TIME, parse_speed

pytestmark = pytest.mark.unit
BASE = ["/bin/cluster-autoscaler", "--cloud-provider=externalgrpc", "--scan-interval=10s"]


def test_real_time_keeps_the_pod_age_wait() -> None:
    assert replay_flags(scale=REAL_TIME, argv=BASE) == {}
    assert replay_flags(scale=parse_speed(0.5, field="speed"), argv=BASE) == {}


def test_faster_runs_bypass_a_scheduler_no_pod_uses() -> None:
    flags = replay_flags(scale=parse_speed(20, field="speed"), argv=BASE)
    assert flags == {"bypassed-scheduler-names": BYPASSED_SCHEDULER}
    assert with_flags(BASE, flags=flags)[-1] == (
        f"--bypassed-scheduler-names={BYPASSED_SCHEDULER}")


def test_allowed_schedulers_are_extended_or_ca_refuses_to_start() -> None:
    argv = [*BASE, "--allowed-scheduler-names=default-scheduler,batch"]
    flags = replay_flags(scale=parse_speed(10, field="speed"), argv=argv)
    assert flags["allowed-scheduler-names"] == f"default-scheduler,batch,{BYPASSED_SCHEDULER}"


def test_a_users_own_bypass_is_left_alone() -> None:
    argv = [*BASE, "--bypassed-scheduler-names=volcano"]
    assert replay_flags(scale=parse_speed(10, field="speed"), argv=argv) == {}
