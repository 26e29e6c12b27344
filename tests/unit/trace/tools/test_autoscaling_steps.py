from __future__ import annotations

from typing import Any

import pytest

from simkube.core.errors import ConfigError
from simkube.trace.tools.autoscaling_steps import HpaChange, ScaleLoad, hpa_name

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("fields", "problem"), [
    ({}, "changes nothing"),
    ({"cpu_utilization": 0}, "CPU target must be a whole number of at least 1"),
    ({"min_replicas": 4, "max_replicas": 2}, "min replicas 4 exceed max replicas 2"),
])
def test_hpa_steps_are_checked_when_made(fields: dict[str, Any], problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        HpaChange(namespace="a", name="b", **fields)


@pytest.mark.parametrize("factor", [0, -1, float("inf")])
def test_load_factors_must_be_positive(factor: float) -> None:
    with pytest.raises(ConfigError, match="load factor must be a number greater than 0"):
        ScaleLoad(factor=factor)


def test_hpa_names_need_a_namespace() -> None:
    assert hpa_name("shop/web", what="--hpa") == ("shop", "web")
    for text in ("web", "/web", "shop/", "a/b/c"):
        with pytest.raises(ConfigError, match="is not namespace/name"):
            hpa_name(text, what="--hpa")
