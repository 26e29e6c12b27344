"""Cron schedules as Kubernetes reads them, evaluated on the trace's timeline.

A replayed CronJob must fire at the trace times its production schedule fired at, whatever
the replay's speed, so sk-driver evaluates the schedule itself (``cronjobs.py``) instead of
leaving it to the controller manager's wall clock. The grammar is the one the CronJob API
accepts: five fields (minute, hour, day of month, month, day of week) of ``*``, values,
ranges ``a-b``, steps ``/n``, lists and month/weekday names, ``?`` as ``*``, 7 as Sunday, and
the ``@yearly``/``@annually``/``@monthly``/``@weekly``/``@daily``/``@midnight``/``@hourly``
descriptors. When both day fields are restricted a day matches either of them (cron's
long-standing rule); a field that starts with ``*`` counts as unrestricted.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from simkube.core.errors import SimkubeError

MACROS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
          "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
          "@hourly": "0 * * * *"}
MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
# A schedule that names an impossible date (30 February) never fires; give up after this.
SEARCH_LIMIT = timedelta(days=366 * 5)


class CronScheduleError(SimkubeError, ValueError):
    """A schedule the CronJob API would not accept, or one this module cannot evaluate."""


@dataclass(frozen=True, slots=True)
class _Field:
    name: str
    low: int
    high: int
    names: tuple[str, ...] = ()
    names_start: int = 0


FIELDS = (_Field("minute", 0, 59), _Field("hour", 0, 23), _Field("day of month", 1, 31),
          _Field("month", 1, 12, MONTHS, 1), _Field("day of week", 0, 7, WEEKDAYS, 0))


def _value(text: str, spec: _Field, schedule: str) -> int:
    lowered = text.lower()
    if lowered in spec.names:
        return spec.names.index(lowered) + spec.names_start
    if not text.isdigit():
        raise CronScheduleError(f"schedule {schedule!r}: {spec.name} {text!r} is not a number"
                                + (" or a name" if spec.names else ""))
    number = int(text)
    if not spec.low <= number <= spec.high:
        raise CronScheduleError(f"schedule {schedule!r}: {spec.name} {number} is outside "
                                f"{spec.low}-{spec.high}")
    return number


def _parse_field(text: str, spec: _Field, schedule: str) -> frozenset[int]:
    values: set[int] = set()
    for part in text.split(","):
        span, _, step_text = part.partition("/")
        step = 1
        if step_text:
            if not step_text.isdigit() or int(step_text) == 0:
                raise CronScheduleError(f"schedule {schedule!r}: step {step_text!r} of the "
                                        f"{spec.name} is not a positive number")
            step = int(step_text)
        if span in ("*", "?"):
            low, high = spec.low, spec.high
        elif "-" in span:
            first, _, last = span.partition("-")
            low, high = _value(first, spec, schedule), _value(last, spec, schedule)
            if low > high:
                raise CronScheduleError(f"schedule {schedule!r}: {spec.name} range {span!r} "
                                        "runs backwards")
        else:
            low = _value(span, spec, schedule)
            high = spec.high if step_text else low
        values.update(range(low, high + 1, step))
    return frozenset(values)


@dataclass(frozen=True, slots=True)
class CronSchedule:
    text: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday
    days_restricted: bool
    weekdays_restricted: bool

    @classmethod
    def parse(cls, text: str) -> CronSchedule:
        expanded = MACROS.get(text.strip().lower(), text)
        if expanded.strip().startswith("@"):
            raise CronScheduleError(f"schedule {text!r}: unknown descriptor (known: "
                                    f"{', '.join(MACROS)})")
        parts = expanded.split()
        if len(parts) != len(FIELDS):
            raise CronScheduleError(f"schedule {text!r}: expected 5 fields (minute hour "
                                    f"day-of-month month day-of-week), got {len(parts)}")
        sets = [_parse_field(part, spec, text) for part, spec in zip(parts, FIELDS, strict=True)]
        weekdays = frozenset(day % 7 for day in sets[4])
        return cls(text=text, minutes=sets[0], hours=sets[1], days=sets[2], months=sets[3],
                   weekdays=weekdays, days_restricted=not parts[2].startswith(("*", "?")),
                   weekdays_restricted=not parts[4].startswith(("*", "?")))

    def _day_matches(self, moment: datetime) -> bool:
        in_days = moment.day in self.days
        in_weekdays = (moment.isoweekday() % 7) in self.weekdays
        if self.days_restricted and self.weekdays_restricted:
            return in_days or in_weekdays
        return in_days and in_weekdays

    def next_after(self, moment: datetime) -> datetime | None:
        """The first firing strictly after ``moment`` (in ``moment``'s time zone), or None
        when the schedule names no date that exists."""
        candidate = moment.replace(second=0, microsecond=0) + timedelta(minutes=1)
        limit = moment + SEARCH_LIMIT
        while candidate <= limit:
            if candidate.month not in self.months:
                month_start = candidate.replace(day=1, hour=0, minute=0)
                candidate = (month_start + timedelta(days=32)).replace(day=1)
            elif not self._day_matches(candidate):
                candidate = (candidate + timedelta(days=1)).replace(hour=0, minute=0)
            elif candidate.hour not in self.hours:
                candidate = (candidate + timedelta(hours=1)).replace(minute=0)
            elif candidate.minute not in self.minutes:
                candidate += timedelta(minutes=1)
            else:
                return candidate
        return None
