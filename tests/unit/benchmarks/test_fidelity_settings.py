"""The fidelity benchmark's settings: defaults, parsing, and refusals that name the variable."""

from __future__ import annotations

import pytest

from benchmarks.fidelity_settings import AUTOSCALER, TIMERS, SettingsError, from_environ
from simkube.env.autoscalers.kinds import AutoscalerKind

pytestmark = pytest.mark.unit


def test_defaults_are_the_full_benchmark() -> None:
    settings = from_environ({})
    assert settings.minutes == 20
    assert settings.duration_s == 1200
    assert settings.speeds == (1, 10, 20, 50)
    assert settings.repetitions == 2
    assert not settings.write_docs
    assert settings.autoscaler is AutoscalerKind.CLUSTER_AUTOSCALER


def test_a_short_run_is_configured_by_variables() -> None:
    settings = from_environ({"SIMKUBE_FIDELITY_MINUTES": "3", "SIMKUBE_FIDELITY_SPEEDS": "10, 1,10",
                             "SIMKUBE_FIDELITY_REPETITIONS": "1",
                             "SIMKUBE_FIDELITY_WRITE_DOCS": "1"})
    assert settings.duration_s == 180
    assert settings.speeds == (1, 10)  # sorted, repeats dropped
    assert settings.repetitions == 1
    assert settings.write_docs


@pytest.mark.parametrize(("variable", "value", "says"), [
    ("SIMKUBE_FIDELITY_MINUTES", "soon", "not a number"),
    ("SIMKUBE_FIDELITY_MINUTES", "0.5", "at least 1"),
    ("SIMKUBE_FIDELITY_MINUTES", "nan", "at least 1"),
    ("SIMKUBE_FIDELITY_SPEEDS", "1,fast", "'fast' is not a speed"),
    ("SIMKUBE_FIDELITY_SPEEDS", "0,10", "above 0"),
    ("SIMKUBE_FIDELITY_REPETITIONS", "2.5", "not a whole number"),
    ("SIMKUBE_FIDELITY_REPETITIONS", "0", "use 1 to 100"),
    ("SIMKUBE_FIDELITY_AUTOSCALER", "keda", "use one of cluster-autoscaler, karpenter"),
    ("SIMKUBE_FIDELITY_AUTOSCALER", "Karpenter", "use one of cluster-autoscaler, karpenter"),
])
def test_wrong_values_are_refused_by_name(variable: str, value: str, says: str) -> None:
    with pytest.raises(SettingsError, match=variable) as caught:
        from_environ({variable: value})
    assert says in str(caught.value)


def test_timers_reach_the_truth_and_the_replays_and_typos_are_refused() -> None:
    settings = from_environ({
        TIMERS: "clusterAutoscaler.scale-down-unneeded-time=3m, "
                                  "scheduler.podMaxBackoffSeconds=5"})
    assert settings.timers == ("clusterAutoscaler.scale-down-unneeded-time=3m",
                               "scheduler.podMaxBackoffSeconds=5")
    assert dict(settings.timer_settings.values) == {
        "clusterAutoscaler.scale-down-unneeded-time": 180_000,
        "scheduler.podMaxBackoffSeconds": 5000}
    assert from_environ({}).timers == ()
    with pytest.raises(SettingsError, match="SIMKUBE_FIDELITY_TIMERS"):
        from_environ({TIMERS: "clusterAutoscaler.scan=1s"})


@pytest.mark.parametrize("value", ["karpenter", " karpenter "])
def test_karpenter_is_chosen_by_variable(value: str) -> None:
    assert from_environ({AUTOSCALER: value}).autoscaler is AutoscalerKind.KARPENTER
    assert from_environ({AUTOSCALER: ""}).autoscaler is AutoscalerKind.CLUSTER_AUTOSCALER


@pytest.mark.parametrize(("autoscaler", "timer"), [
    ("karpenter", "clusterAutoscaler.scale-down-unneeded-time=2m"),
    ("cluster-autoscaler", "karpenter.consolidateAfter=1m"),
])
def test_a_timer_of_the_autoscaler_not_running_is_refused(autoscaler: str, timer: str) -> None:
    with pytest.raises(SettingsError, match="SIMKUBE_FIDELITY_TIMERS") as caught:
        from_environ({AUTOSCALER: autoscaler, TIMERS: f"scheduler.podMaxBackoffSeconds=5,{timer}"})
    assert f"{timer} would be set nowhere" in str(caught.value)
    assert f"SIMKUBE_FIDELITY_AUTOSCALER={autoscaler}" in str(caught.value)


def test_karpenter_takes_its_own_and_the_shared_timers() -> None:
    settings = from_environ({
        AUTOSCALER: "karpenter",
        TIMERS: "karpenter.consolidateAfter=1m,scheduler.podMaxBackoffSeconds=5"})
    assert dict(settings.timer_settings.values) == {"karpenter.consolidateAfter": 60_000,
                                                     "scheduler.podMaxBackoffSeconds": 5000}
