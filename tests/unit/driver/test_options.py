from __future__ import annotations

import math

import pytest

from simkube.core.durations import DurationError
from simkube.driver.errors import DriverInputError
from simkube.driver.options import (
    DEFAULT_CONCURRENCY,
    DEFAULT_NODE_SELECTOR,
    DEFAULT_TOLERATIONS,
    build_options,
)

pytestmark = pytest.mark.unit


def test_defaults_put_pods_on_fake_nodes() -> None:
    options = build_options(name="sim")
    assert options.scale.speed == 1.0
    assert options.duration_ms is None
    assert options.prefix == "virtual"
    assert dict(options.placement.node_selector) == dict(DEFAULT_NODE_SELECTOR)
    assert options.placement.tolerations == DEFAULT_TOLERATIONS
    assert options.max_concurrency == DEFAULT_CONCURRENCY
    assert not options.cleanup


def test_everything_given() -> None:
    options = build_options(
        name="sim-2", speed=10, duration="15m", prefix="sim", node_selector={"pool": "a"},
        tolerations=[{"key": "k", "operator": "Equal", "value": "v", "effect": "NoExecute"}],
        startup_delay="2s", startup_jitter="1s", lifetime_jitter="500ms", cleanup=True,
        max_concurrency=8)
    assert (options.scale.speed, options.duration_ms, options.prefix) == (10.0, 900_000, "sim")
    assert options.placement.tolerations == (
        {"key": "k", "operator": "Equal", "value": "v", "effect": "NoExecute"},)
    assert (options.pod_timing.startup_delay_ms, options.pod_timing.startup_jitter_ms,
            options.pod_timing.lifetime_jitter_ms) == (2000, 1000, 500)
    assert options.cleanup
    assert options.max_concurrency == 8


@pytest.mark.parametrize(("fields", "field", "words"), [
    ({"name": ""}, "--name", "is empty"),
    ({"name": "Bad_Name"}, "--name", "not a valid simulation name"),
    ({"name": "x" * 64}, "--name", "not a valid simulation name"),
    ({"speed": -1.0}, "--speed", "must be a positive number"),
    ({"speed": 0.0}, "--speed", "must be a positive number"),
    ({"speed": math.nan}, "--speed", "must be a positive number"),
    ({"speed": 1e9}, "--speed", "above the maximum"),
    ({"duration": "soon"}, "--duration", "not a duration"),
    ({"prefix": "Virtual"}, "--prefix", "not a valid namespace prefix"),
    ({"prefix": "p" * 41}, "--prefix", "not a valid namespace prefix"),
    ({"max_concurrency": 0}, "--concurrency", "between 1 and"),
    ({"node_selector": {"bad key!": "x"}}, "--node-selector", "not a valid label key"),
    ({"node_selector": {"ok": "bad value!"}}, "--node-selector", "not a valid label value"),
    ({"tolerations": [{"key": "k", "operator": "Maybe"}]}, "tolerations[0]", "Exists or Equal"),
    ({"tolerations": [{"key": "k", "operator": "Exists", "value": "v"}]}, "tolerations[0]",
     "has no value"),
    ({"tolerations": [{"operator": "Equal"}]}, "tolerations[0]", "needs operator Exists"),
    ({"tolerations": [{"key": "k", "effect": "Sometimes"}]}, "tolerations[0]", "one of"),
    ({"startup_delay": "fast"}, "--startup-delay", "not a duration"),
])
def test_bad_values_name_their_field(fields: dict[str, object], field: str, words: str) -> None:
    names = {"name": "--name", "speed": "--speed", "duration": "--duration",
             "prefix": "--prefix", "max_concurrency": "--concurrency",
             "node_selector": "--node-selector", "startup_delay": "--startup-delay"}
    arguments: dict[str, object] = {"name": "sim", **fields}
    with pytest.raises((DriverInputError, DurationError), match=words) as caught:
        build_options(**arguments, field_names=names)  # type: ignore[arg-type]
    assert caught.value.field == field


def test_empty_placement_is_allowed() -> None:
    options = build_options(name="sim", node_selector={}, tolerations=[])
    assert dict(options.placement.node_selector) == {}
    assert options.placement.tolerations == ()
