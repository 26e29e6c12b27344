"""The run's speed and holds, set on a paced build's command line."""

from __future__ import annotations

import pytest

from simkube.core.simtime import REAL_TIME, TimeScale
from simkube.env.pacing import RUN_CONFIGMAP_VARIABLE, SPEED_VARIABLE, paced_argv

pytestmark = pytest.mark.unit
SCHEDULER = ["/bin/kube-scheduler", "--config=/c.yaml"]
KARPENTER = ["/usr/bin/env", "KUBECONFIG=/k", "/bin/karpenter", "--metrics-port=1"]


def test_a_command_without_env_gets_an_env_prefix() -> None:
    argv = paced_argv(SCHEDULER, scale=TimeScale(20.0), run_configmap="ns/cm")
    assert argv[1:] == [f"{SPEED_VARIABLE}=20.0", f"{RUN_CONFIGMAP_VARIABLE}=ns/cm", *SCHEDULER]
    assert argv[0].endswith("env")


def test_an_env_prefix_is_kept_and_the_variables_go_after_it() -> None:
    argv = paced_argv(KARPENTER, scale=TimeScale(10.0))
    assert argv == ["/usr/bin/env", f"{SPEED_VARIABLE}=10.0", *KARPENTER[1:]]


def test_a_new_run_replaces_the_last_ones_variables() -> None:
    first = paced_argv(SCHEDULER, scale=TimeScale(10.0), run_configmap="ns/a")
    again = paced_argv(first, scale=TimeScale(2.5))
    assert [a for a in again if a.startswith(SPEED_VARIABLE)] == [f"{SPEED_VARIABLE}=2.5"]
    assert not any(a.startswith(RUN_CONFIGMAP_VARIABLE) for a in again)
    assert again.count(again[0]) == 1  # one env, not two


def test_speed_one_is_upstreams_command() -> None:
    assert paced_argv(SCHEDULER, scale=REAL_TIME, run_configmap="ns/cm") == SCHEDULER
    paced = paced_argv(KARPENTER, scale=TimeScale(10.0), run_configmap="ns/cm")
    assert paced_argv(paced, scale=REAL_TIME) == KARPENTER
