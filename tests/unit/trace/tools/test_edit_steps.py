from __future__ import annotations

import pytest

from simkube.core.errors import ConfigError
from simkube.trace.tools.edit_steps import (
    TimePoint,
    match_from,
    number,
    parse_duration,
    parse_time_point,
    toleration,
)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("text", "ms"), [
    ("500ms", 500), ("90s", 90_000), ("10m", 600_000), ("1h30m", 5_400_000), ("1.5s", 1500),
    ("2d", 172_800_000),
])
def test_durations(text: str, ms: int) -> None:
    assert parse_duration(text, what="--duration") == ms


@pytest.mark.parametrize("text", ["", "10", "ten minutes", "10m junk", "-5s"])
def test_bad_durations_name_the_flag(text: str) -> None:
    with pytest.raises(ConfigError, match="--duration"):
        parse_duration(text, what="--duration")


def test_time_points_are_offsets_or_zoned_iso_times() -> None:
    assert parse_time_point("5m", what="x") == TimePoint(offset_ms=300_000)
    assert parse_time_point("2024-03-20T00:00:00Z", what="x") == TimePoint(
        absolute_ms=1_710_892_800_000)
    assert TimePoint(offset_ms=5).resolve(100) == 105
    assert TimePoint(absolute_ms=7).resolve(100) == 7
    with pytest.raises(ConfigError, match="no time zone"):
        parse_time_point("2024-03-20T00:00:00", what="--start")
    with pytest.raises(ConfigError, match="neither a duration"):
        parse_time_point("yesterday", what="--start")


def test_tolerations_from_flags() -> None:
    assert dict(toleration("dedicated=gpu:NoSchedule", what="x")) == {
        "key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
    assert dict(toleration("spot", what="x")) == {"key": "spot", "operator": "Exists"}
    with pytest.raises(ConfigError, match="NoExecute"):
        toleration("a:Sometimes", what="--add-toleration")


def test_match_and_numbers_from_yaml_values() -> None:
    match = match_from({"namespaces": "dsb", "kinds": ["Deployment"], "selector": "a=b"},
                       what="s")
    assert match.namespaces == frozenset({"dsb"})
    with pytest.raises(ConfigError, match=r"s\.kinds must be a list of strings"):
        match_from({"kinds": [1]}, what="s")
    with pytest.raises(ConfigError, match="selector must be a string"):
        match_from({"selector": {"app": "web"}}, what="s")
    assert number(2, what="f") == 2.0
    with pytest.raises(ConfigError, match="greater than 0"):
        number(0, what="f")
    with pytest.raises(ConfigError, match="must be a number"):
        number(True, what="f")
