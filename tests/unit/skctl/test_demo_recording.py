"""sk-tracer's configuration in the demo records what the replay's HPA needs."""

from __future__ import annotations

import pytest
import yaml

from simkube.skctl.demo_recording import TRACER_CONFIG
from simkube.tracer.config import parse_config

pytestmark = pytest.mark.unit


def test_the_tracer_records_the_hpa_and_usage_every_second() -> None:
    config = parse_config(yaml.safe_load(TRACER_CONFIG), source="demo")
    assert config.kind("autoscaling/v2.HorizontalPodAutoscaler") is not None
    deployments = config.kind("apps/v1.Deployment")
    assert deployments is not None
    assert deployments.in_scope("shop")
    assert config.usage.period_ms == 1000  # the tracer's finest; 16 s of the shop's day
