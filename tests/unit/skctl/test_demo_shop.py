"""The shop's objects: how much traffic settles web's HPA where, and what the HPA is."""

from __future__ import annotations

import math

import pytest

from simkube.skctl import demo_shop
from simkube.skctl.demo_shop import (
    WEB_CPU_REQUEST_M,
    WEB_MAX,
    WEB_MIN,
    WEB_TARGET_PERCENT,
    opening,
    web_hpa,
    web_load,
)

pytestmark = pytest.mark.unit
TOLERANCE = 0.1  # kube-controller-manager's default --horizontal-pod-autoscaler-tolerance


@pytest.mark.parametrize("pods", range(WEB_MIN, WEB_MAX + 1))
def test_a_load_settles_the_hpa_at_its_pods(pods: int) -> None:
    # The HPA's rule with every pod ready: desired = ceil(current * usage / target), left
    # alone while usage / target is within the tolerance.
    target_m = WEB_CPU_REQUEST_M * WEB_TARGET_PERCENT / 100
    load = web_load(pods)
    assert math.ceil(load / target_m) == pods  # from any smaller size, it scales to pods
    assert abs(load / pods / target_m - 1) <= TOLERANCE  # at pods, it stays


def test_the_hpa_scales_web_on_cpu_without_wall_clock_behavior() -> None:
    spec = web_hpa()["spec"]
    assert spec["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment",
                                      "name": "web"}
    assert (spec["minReplicas"], spec["maxReplicas"]) == (WEB_MIN, WEB_MAX)
    assert spec["metrics"][0]["resource"]["target"] == {"type": "Utilization",
                                                        "averageUtilization": 50}
    assert "behavior" not in spec  # its periods would not follow a replay's speed


def test_the_shop_opens_with_web_at_the_api_default_before_its_hpa() -> None:
    kinds = [(obj["kind"], obj["metadata"]["name"]) for obj in opening()]
    assert kinds == [("Deployment", "web"), ("HorizontalPodAutoscaler", "web"),
                     ("Deployment", "worker"), ("CronJob", "invoices")]
    # A replay's reset of a recorded change to the API default is no change (docs/hpa.md).
    assert opening()[0]["spec"]["replicas"] == 1
    # Every object the shop opens with is closed at the end.
    assert sorted(name for _, name in demo_shop.OBJECTS) == sorted(n for _, n in kinds)
