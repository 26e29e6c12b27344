from __future__ import annotations

import pytest

from simkube.core.durations import DurationError, go_duration, human_duration, parse_duration

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("text", "ms"), [
    ("90s", 90_000), ("15m", 900_000), ("2h", 7_200_000), ("1h30m", 5_400_000),
    ("500ms", 500), ("1.5s", 1500), (" 2m ", 120_000), ("1h1m1s1ms", 3_661_001)])
def test_durations(text: str, ms: int) -> None:
    assert parse_duration(text, field="--duration") == ms


@pytest.mark.parametrize(("text", "words"), [
    ("", "is empty"), ("90", "not a duration"), ("5 minutes", "not a duration"),
    ("-5s", "negative"), ("0s", "zero"), ("s", "not a duration"),
    ("9000h", "longer than a year")])
def test_bad_durations_name_the_field(text: str, words: str) -> None:
    with pytest.raises(DurationError, match=words) as caught:
        parse_duration(text, field="--duration")
    assert caught.value.field == "--duration"
    assert "--duration" in str(caught.value)


def test_a_bare_number_gets_a_hint() -> None:
    with pytest.raises(DurationError) as caught:
        parse_duration("90", field="duration")
    assert caught.value.hint == "add a unit: s, m, h or ms"


def test_zero_is_allowed_where_asked() -> None:
    assert parse_duration("0s", field="x", allow_zero=True) == 0


def test_go_and_human_forms() -> None:
    assert go_duration(12_000) == "12000ms"
    assert go_duration(-5) == "0ms"
    assert human_duration(12) == "12ms"
    assert human_duration(4_250) == "4.2s"
    assert human_duration(125_000) == "2m05s"
    assert human_duration(3_725_000) == "1h02m05s"
