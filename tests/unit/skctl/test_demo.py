"""What the demo says the HPA did, from a run's summary.json."""

from __future__ import annotations

import pytest

from simkube.skctl.demo import hpa_lines

pytestmark = pytest.mark.unit


def test_an_hpas_replicas_and_scale_events_in_one_line() -> None:
    summary = {"hpas": {"shop/web": {"min_desired": 2, "peak_desired": 24,
                                     "final_desired": 2, "scale_events": 7, "scale_ups": 4,
                                     "scale_downs": 3, "mean_desired": 9.1}}}
    assert hpa_lines(summary) == ["HPA shop/web: replicas 2 → 24 → 2, 7 scale events "
                                  "(4 up, 3 down)"]


def test_no_hpa_no_line() -> None:
    assert hpa_lines({"hpas": {}}) == []
    assert hpa_lines({}) == []
