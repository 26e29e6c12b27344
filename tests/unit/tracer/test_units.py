from __future__ import annotations

import pytest

from simkube.core.errors import ConfigError
from simkube.tracer.units import parse_duration, parse_size, parse_time_ms, rfc3339_ms

pytestmark = pytest.mark.unit
NOW = 1_700_000_000_000


def test_durations_and_sizes() -> None:
    assert parse_duration("1h30m", what="x") == 5400
    assert parse_duration("7d", what="x") == 7 * 86400
    assert parse_duration("500ms", what="x") == 0.5
    assert parse_duration("0", what="x") == 0
    assert parse_size("10GiB", what="x") == 10 * 2**30
    assert parse_size("500MB", what="x") == 500 * 10**6
    assert parse_size("4096", what="x") == 4096


@pytest.mark.parametrize("text", ["7 days", "1h-", "h", "", "-5m"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(ConfigError, match=r"--retention-age .*(not a duration|empty|negative)"):
        parse_duration(text, what="--retention-age")


def test_bad_sizes() -> None:
    with pytest.raises(ConfigError, match="is not a size"):
        parse_size("ten gigs", what="--retention-bytes")


def test_times() -> None:
    assert parse_time_ms("now", what="--start", now_ms=NOW) == NOW
    assert parse_time_ms("-15m", what="--start", now_ms=NOW) == NOW - 15 * 60_000
    assert parse_time_ms("2023-11-14T22:13:20Z", what="--start", now_ms=0) == NOW
    assert parse_time_ms("2023-11-14T23:13:20.5+01:00", what="--start", now_ms=0) == NOW + 500
    assert rfc3339_ms("2023-11-14T22:13:20Z") == NOW
    assert rfc3339_ms(None) is None
    assert rfc3339_ms("yesterday") is None


@pytest.mark.parametrize(("text", "problem"), [
    ("yesterday", "is not a time"), ("2023-11-14T22:13:20", "has no time zone"),
    ("-fifteen", "is not a duration")])
def test_bad_times(text: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        parse_time_ms(text, what="--start", now_ms=NOW)
