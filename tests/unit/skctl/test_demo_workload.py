"""The shop's day: traffic rises past what web's HPA starts at and falls back."""

from __future__ import annotations

import pytest

from simkube.core.timers import BY_KEY
from simkube.simulation.timers import timer_sections, timer_settings
from simkube.skctl.demo_shop import WEB_MAX, WEB_MIN
from simkube.skctl.demo_workload import CLOSING, DAY_STRETCH, HPA_TIMERS, STEPS

pytestmark = pytest.mark.unit


def test_the_day_rises_to_the_hpas_maximum_and_falls_to_its_minimum() -> None:
    traffic = [step.traffic for step in STEPS]
    peak = traffic.index(max(traffic))
    assert (traffic[0], max(traffic), traffic[-1]) == (WEB_MIN, WEB_MAX, WEB_MIN)
    assert traffic[:peak + 1] == sorted(traffic[:peak + 1])  # rises, then
    assert traffic[peak:] == sorted(traffic[peak:], reverse=True)  # falls
    times = [step.at_seconds for step in (*STEPS, CLOSING)]
    assert times == sorted(set(times))
    assert (CLOSING.replicas, CLOSING.traffic) == ({}, STEPS[-1].traffic)


def test_the_evening_outlasts_the_hpas_stabilization_and_karpenters_wait() -> None:
    settings = timer_settings(timer_sections(HPA_TIMERS))
    window_s = settings.trace_ms(
        BY_KEY["controllerManager.horizontal-pod-autoscaler-downscale-stabilization"]) / 1000
    assert window_s == 60
    peak = max(range(len(STEPS)), key=lambda i: STEPS[i].traffic)
    sale_ends = STEPS[peak + 1]
    assert sale_ends.traffic < STEPS[peak].traffic
    evening_s = (CLOSING.at_seconds - sale_ends.at_seconds) * DAY_STRETCH
    # web shrinks in two stages (sale's end, evening), each after the window plus a sync and
    # two scrapes (15 s each), and Karpenter needs about a minute to remove an underused node
    # (whose evictions hold the HPA's second stage up: demo_workload's docstring).
    assert evening_s >= 2 * (window_s + 45) + 60
