"""The fidelity benchmark's settings: defaults, parsing, and refusals that name the variable."""

from __future__ import annotations

import pytest

from benchmarks.fidelity_settings import TIMERS, SettingsError, from_environ

pytestmark = pytest.mark.unit


def test_defaults_are_the_full_benchmark() -> None:
    settings = from_environ({})
    assert settings.minutes == 20
    assert settings.duration_s == 1200
    assert settings.speeds == (1, 5, 10, 20, 50)
    assert settings.repetitions == 2
    assert not settings.write_docs


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
