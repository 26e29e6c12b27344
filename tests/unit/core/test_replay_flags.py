import pytest

from simkube.core.flags import with_flags
from simkube.core.replay_flags import BYPASSED_SCHEDULER, replay_flags

pytestmark = pytest.mark.unit
BASE = ["/bin/cluster-autoscaler", "--cloud-provider=externalgrpc", "--scan-interval=10s"]


def test_every_run_bypasses_a_scheduler_no_pod_uses() -> None:
    flags = replay_flags(argv=BASE)
    assert flags == {"bypassed-scheduler-names": BYPASSED_SCHEDULER}
    assert with_flags(BASE, flags=flags)[-1] == (
        f"--bypassed-scheduler-names={BYPASSED_SCHEDULER}")


def test_allowed_schedulers_are_extended_or_ca_refuses_to_start() -> None:
    argv = [*BASE, "--allowed-scheduler-names=default-scheduler,batch"]
    assert replay_flags(argv=argv)["allowed-scheduler-names"] == (
        f"default-scheduler,batch,{BYPASSED_SCHEDULER}")


def test_a_users_own_bypass_is_left_alone() -> None:
    assert replay_flags(argv=[*BASE, "--bypassed-scheduler-names=volcano"]) == {}
