from __future__ import annotations

from typing import Any

import pytest

from simkube.core.timers import NEVER
from simkube.simulation.timers import TimerSpecError, seed_of, timer_sections, timer_settings

pytestmark = pytest.mark.unit


def test_sections_become_trace_milliseconds() -> None:
    settings = timer_settings({
        "autoscaler": {"clusterAutoscaler": {"scan-interval": "10s",
                                             "--scale-down-unneeded-time": "5m"}},
        "scheduler": {"podInitialBackoffSeconds": 2, "podMaxBackoffSeconds": "20s"},
        "controllerManager": {"horizontal-pod-autoscaler-sync-period": "30s"}})
    assert dict(settings.values) == {
        "clusterAutoscaler.scan-interval": 10_000,
        "clusterAutoscaler.scale-down-unneeded-time": 300_000,
        "scheduler.podInitialBackoffSeconds": 2000, "scheduler.podMaxBackoffSeconds": 20_000,
        "controllerManager.horizontal-pod-autoscaler-sync-period": 30_000}


def test_karpenter_section_in_trace_milliseconds_never_included() -> None:
    settings = timer_settings({"autoscaler": {"karpenter": {
        "batch-idle-duration": "2s", "--batch-max-duration": 20, "consolidateAfter": "5m"}}})
    assert dict(settings.values) == {"karpenter.batch-idle-duration": 2000,
                                     "karpenter.batch-max-duration": 20_000,
                                     "karpenter.consolidateAfter": 300_000}
    never = timer_settings({"autoscaler": {"karpenter": {"consolidateAfter": "Never"}}})
    assert dict(never.values) == {"karpenter.consolidateAfter": NEVER}


def test_skctl_timer_flags_reach_the_karpenter_section() -> None:
    spec = timer_sections(("karpenter.consolidateAfter=1m",
                           "clusterAutoscaler.scan-interval=10s"))
    assert spec == {"autoscaler": {"karpenter": {"consolidateAfter": "1m"},
                                   "clusterAutoscaler": {"scan-interval": "10s"}}}
    assert dict(timer_settings(spec).values) == {"karpenter.consolidateAfter": 60_000,
                                                 "clusterAutoscaler.scan-interval": 10_000}


def test_nothing_given_means_production_defaults() -> None:
    assert dict(timer_settings({}).values) == {}


@pytest.mark.parametrize(("spec", "words"), [
    ({"autoscaler": {"clusterAutoscaler": {"scan-intervall": "1s"}}},
     "spec.autoscaler.clusterAutoscaler.scan-intervall is not a timer .*did you mean "
     "'scan-interval'"),
    ({"autoscaler": {"clusterAutoscaler": {"scan-interval": "soon"}}},
     "scan-interval 'soon' is not a duration"),
    ({"autoscaler": {"karpenter": {"consolidateAfterr": "1m"}}},
     "spec.autoscaler.karpenter.consolidateAfterr is not a timer .*did you mean "
     "'consolidateAfter'"),
    ({"autoscaler": {"karpenter": {"batch-max-duration": "Never"}}},
     "batch-max-duration 'Never' is not a duration"),
    ({"scheduler": {"podInitialBackoffSeconds": -1}}, "negative"),
    ({"scheduler": {"podInitialBackoffSeconds": True}}, "not a duration"),
    ({"scheduler": ["x"]}, "spec.scheduler must be a mapping"),
    ({"scheduler": {"podInitialBackoffSeconds": 5, "podMaxBackoffSeconds": 2}},
     "podMaxBackoffSeconds \\(2s\\) is below podInitialBackoffSeconds \\(5s\\)"),
])
def test_mistakes_name_the_field(spec: dict[str, Any], words: str) -> None:
    with pytest.raises(TimerSpecError, match=words):
        timer_settings(spec)


def test_the_seed_is_given_or_derived_from_the_name() -> None:
    assert seed_of({"seed": 42}, name="a") == 42
    assert seed_of({}, name="a") == seed_of({}, name="a") != seed_of({}, name="b")
    for bad in (-1, "7", 1.5, True):
        with pytest.raises(TimerSpecError, match=r"spec\.seed"):
            seed_of({"seed": bad}, name="a")
