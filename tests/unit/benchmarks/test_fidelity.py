"""The fidelity benchmark refuses to run without an autoscaler or with wrong settings: one
JSON line saying why, nothing started."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import fidelity, fidelity_autoscaler
from simkube.core.errors import EnvironmentStateError
from simkube.env.autoscalers.cluster_autoscaler import AutoscalerBinary

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def _nothing_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: str, **kwargs: object) -> str:
        raise AssertionError(f"skctl {args} must not run")
    monkeypatch.setattr(fidelity, "skctl", refuse)
    monkeypatch.setattr(fidelity, "configure_logging", lambda: None)


def test_without_a_cluster_autoscaler_it_says_so_and_stops(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(explicit: Path | None) -> AutoscalerBinary:
        raise EnvironmentStateError("no Cluster Autoscaler binary was given")
    monkeypatch.setattr(fidelity_autoscaler, "resolve", missing)
    assert list(fidelity.run()) == [{
        "autoscaler": "cluster-autoscaler", "autoscaler_version": None, "figure": "fidelity",
        "ran": False, "reason": "no Cluster Autoscaler binary was given"}]


def test_wrong_settings_are_named_before_anything_starts(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fidelity_autoscaler, "resolve", lambda explicit: AutoscalerBinary(
        path=Path("/ca"), source="test", version="1.36.1"))
    monkeypatch.setenv("SIMKUBE_FIDELITY_SPEEDS", "fast")
    lines = list(fidelity.run())
    assert len(lines) == 1
    assert lines[0]["autoscaler_version"] == "1.36.1"
    assert lines[0]["ran"] is False
    assert "SIMKUBE_FIDELITY_SPEEDS" in lines[0]["reason"]


def test_karpenter_without_its_binary_says_so_and_never_builds_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(binary: object) -> Path:
        raise EnvironmentStateError("karpenter-kwok v1.13.0 is not built")
    monkeypatch.setattr(fidelity_autoscaler, "binary_path", missing)
    monkeypatch.setenv("SIMKUBE_FIDELITY_AUTOSCALER", "karpenter")
    assert list(fidelity.run()) == [{
        "autoscaler": "karpenter", "autoscaler_version": None, "figure": "fidelity",
        "ran": False, "reason": "karpenter-kwok v1.13.0 is not built"}]


def test_an_unknown_autoscaler_is_named_before_anything_starts(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIMKUBE_FIDELITY_AUTOSCALER", "keda")
    [line] = fidelity.run()
    assert line["autoscaler"] is None
    assert line["ran"] is False
    assert "SIMKUBE_FIDELITY_AUTOSCALER='keda'" in line["reason"]


def test_the_spread_line_judges_speeds_against_the_real_time_replays() -> None:
    label = {"autoscaler": "cluster-autoscaler", "autoscaler_version": "1.36.1"}
    real_time = {"nodes_curve": 0.09, "cost": 0.01, "pending_p90": 0.04}
    worst = {1.0: real_time, 10.0: {**real_time, "nodes_curve": 0.08},
             20.0: {**real_time, "cost": 0.2}}
    [line] = fidelity._against_spread(label, worst)
    assert line["figure"] == "fidelity.highest_speed_within_spread"
    assert line["value"] == 10.0
    assert line["first_miss"] == "speed 20: cost"
    assert line["spread_pct"] == {"nodes_curve_pct": 9.0, "cost_pct": 1.0,
                                  "pending_p90_pct": 4.0}
    assert line["limits_pct"] == {"nodes_curve": 9.0, "cost": 5.0, "pending_p90": 10.0}
    assert list(fidelity._against_spread(label, {10.0: real_time})) == []  # no 1x replays
