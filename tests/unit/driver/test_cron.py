"""Cron schedules: the grammar the CronJob API accepts and the next firing on a timeline."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from simkube.driver.cron import CronSchedule, CronScheduleError

pytestmark = pytest.mark.unit


def at(text: str, zone: object = UTC) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=zone)  # type: ignore[arg-type]


def firings(schedule: str, start: str, count: int) -> list[str]:
    parsed = CronSchedule.parse(schedule)
    moment = at(start)
    found = []
    for _ in range(count):
        following = parsed.next_after(moment)
        assert following is not None
        found.append(following.strftime("%Y-%m-%d %H:%M %a"))
        moment = following
    return found


def test_every_minute_fires_at_the_next_minute_boundaries() -> None:
    assert firings("* * * * *", "2026-11-26 06:00:37", 3) == [
        "2026-11-26 06:01 Thu", "2026-11-26 06:02 Thu", "2026-11-26 06:03 Thu"]


def test_a_firing_is_strictly_after_the_moment() -> None:
    assert firings("*/5 * * * *", "2026-11-26 06:05:00", 2) == [
        "2026-11-26 06:10 Thu", "2026-11-26 06:15 Thu"]


def test_ranges_steps_and_lists() -> None:
    assert firings("0,30 9-10 * * *", "2026-11-26 08:00", 5) == [
        "2026-11-26 09:00 Thu", "2026-11-26 09:30 Thu", "2026-11-26 10:00 Thu",
        "2026-11-26 10:30 Thu", "2026-11-27 09:00 Fri"]
    assert firings("10-40/15 * * * *", "2026-11-26 08:00", 3) == [
        "2026-11-26 08:10 Thu", "2026-11-26 08:25 Thu", "2026-11-26 08:40 Thu"]
    assert firings("5/20 * * * *", "2026-11-26 08:00", 3) == [
        "2026-11-26 08:05 Thu", "2026-11-26 08:25 Thu", "2026-11-26 08:45 Thu"]


def test_names_and_sunday_as_seven() -> None:
    assert firings("0 12 * jan,DEC sun", "2026-11-26 00:00", 2) == [
        "2026-12-06 12:00 Sun", "2026-12-13 12:00 Sun"]
    assert firings("0 0 * * 7", "2026-11-26 00:00", 1) == ["2026-11-29 00:00 Sun"]


def test_both_day_fields_restricted_match_either() -> None:
    # The 1st of the month or any Monday.
    assert firings("0 0 1 * mon", "2026-11-26 00:00", 3) == [
        "2026-11-30 00:00 Mon", "2026-12-01 00:00 Tue", "2026-12-07 00:00 Mon"]


def test_one_day_field_restricted_needs_only_that_one() -> None:
    assert firings("0 0 13 * *", "2026-11-26 00:00", 1) == ["2026-12-13 00:00 Sun"]
    assert firings("0 0 ? * fri", "2026-11-26 00:00", 1) == ["2026-11-27 00:00 Fri"]


@pytest.mark.parametrize(("macro", "expected"), [
    ("@hourly", "2026-11-26 07:00 Thu"), ("@daily", "2026-11-27 00:00 Fri"),
    ("@midnight", "2026-11-27 00:00 Fri"), ("@weekly", "2026-11-29 00:00 Sun"),
    ("@monthly", "2026-12-01 00:00 Tue"), ("@yearly", "2027-01-01 00:00 Fri"),
    ("@annually", "2027-01-01 00:00 Fri")])
def test_descriptors(macro: str, expected: str) -> None:
    assert firings(macro, "2026-11-26 06:10", 1) == [expected]


def test_leap_day_is_found_years_ahead() -> None:
    assert firings("0 0 29 feb *", "2026-11-26 00:00", 1) == ["2028-02-29 00:00 Tue"]


def test_an_impossible_date_never_fires() -> None:
    assert CronSchedule.parse("0 0 30 2 *").next_after(at("2026-11-26 00:00")) is None


def test_the_moments_time_zone_is_the_schedules() -> None:
    berlin = ZoneInfo("Europe/Berlin")
    following = CronSchedule.parse("0 9 * * *").next_after(at("2026-11-26 09:30", berlin))
    assert following == at("2026-11-27 09:00", berlin)
    assert following is not None
    assert following.astimezone(UTC).hour == 8


@pytest.mark.parametrize(("schedule", "message"), [
    ("* * * *", "expected 5 fields"),
    ("* * * * * *", "expected 5 fields"),
    ("60 * * * *", "minute 60 is outside 0-59"),
    ("* 24 * * *", "hour 24 is outside 0-23"),
    ("* * 0 * *", "day of month 0 is outside 1-31"),
    ("* * * 13 *", "month 13 is outside 1-12"),
    ("* * * * 8", "day of week 8 is outside 0-7"),
    ("*/0 * * * *", "step '0' of the minute is not a positive number"),
    ("*/x * * * *", "step 'x' of the minute is not a positive number"),
    ("30-10 * * * *", "minute range '30-10' runs backwards"),
    ("* * * foo *", "month 'foo' is not a number or a name"),
    ("a * * * *", "minute 'a' is not a number"),
    ("@every 5m", "unknown descriptor"),
    ("", "expected 5 fields"),
])
def test_bad_schedules_are_named(schedule: str, message: str) -> None:
    with pytest.raises(CronScheduleError, match=message.replace("(", r"\(")) as caught:
        CronSchedule.parse(schedule)
    assert repr(schedule) in str(caught.value)
