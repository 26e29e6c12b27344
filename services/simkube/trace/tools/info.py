"""``skctl trace info``: what a trace holds, counted from the file itself.

The JSON form is a stable interface (scripts and tests read it), so its keys are fixed here
in one place and documented in docs/trace-tools.md. Counting uses object identities only, so
even a large native trace is summarised without decoding a single object body.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from simkube.trace.model.objects import check_object
from simkube.trace.model.source import TraceSource
from simkube.trace.model.types import ObjectRef
from simkube.trace.model.usage import RecordedUsage


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageSummary:
    """The recorded usage section, counted from the values as written (even malformed)."""

    workloads: int
    samples: int
    periods_ms: list[int]  # the distinct sampling periods (one, unless traces were merged)
    first_ms: int | None  # trace time of the earliest and latest samples
    last_ms: int | None

    def to_json(self) -> dict[str, Any]:
        return {"workloads": self.workloads, "samples": self.samples,
                "periods_ms": self.periods_ms, "first_ms": self.first_ms,
                "last_ms": self.last_ms}


def summarise_usage(records: list[RecordedUsage]) -> UsageSummary:
    times = [row[0] for record in records for row in record.rows
             if isinstance(row, list | tuple) and row and type(row[0]) is int]
    return UsageSummary(
        workloads=len(records), samples=sum(len(record.rows) for record in records),
        periods_ms=sorted({record.period_ms for record in records
                           if type(record.period_ms) is int}),
        first_ms=min(times, default=None), last_ms=max(times, default=None))


@dataclass(frozen=True, slots=True, kw_only=True)
class TraceSummary:
    format: str
    version: int
    start_ts_ms: int | None
    end_ts_ms: int | None
    events: int
    applied: int
    deleted: int
    applied_by_kind: dict[str, int]
    deleted_by_kind: dict[str, int]
    namespaces: list[str]
    lifecycle_owners: int
    lifecycles: int
    bytes: int
    usage: UsageSummary

    def to_json(self) -> dict[str, Any]:
        """Exactly the documented keys, in the documented order."""
        return {
            "format": self.format, "version": self.version,
            "start_ts_ms": self.start_ts_ms, "end_ts_ms": self.end_ts_ms,
            "events": self.events, "applied": self.applied, "deleted": self.deleted,
            "applied_by_kind": self.applied_by_kind, "deleted_by_kind": self.deleted_by_kind,
            "namespaces": self.namespaces, "lifecycle_owners": self.lifecycle_owners,
            "lifecycles": self.lifecycles, "bytes": self.bytes,
            "usage": self.usage.to_json(),
        }


def summarise(source: TraceSource) -> TraceSummary:
    """Count events, objects by kind, namespaces and lifecycles; initial-state objects count
    as applied (they are applied when a replay starts)."""
    applied: Counter[str] = Counter()
    deleted: Counter[str] = Counter()
    namespaces: set[str] = set()
    events = 0
    first_ts = last_ts = None

    def count(refs: list[ObjectRef], counter: Counter[str]) -> None:
        for ref in refs:
            counter[ref.kind_key] += 1
            if ref.namespace:
                namespaces.add(ref.namespace)

    count([check_object(obj, where="initial state") for obj in source.initial_state()], applied)
    for event in source.events():
        if first_ts is None:
            first_ts = event.ts_ms
        last_ts = event.ts_ms
        events += 1
        count(event.applied_refs(), applied)
        count(event.deleted_refs(), deleted)
    lifecycles = source.lifecycles()
    return TraceSummary(
        format=source.format.family, version=source.header.version,
        start_ts_ms=first_ts, end_ts_ms=last_ts, events=events,
        applied=sum(applied.values()), deleted=sum(deleted.values()),
        applied_by_kind=dict(sorted(applied.items())),
        deleted_by_kind=dict(sorted(deleted.items())),
        namespaces=sorted(namespaces),
        lifecycle_owners=len({(lc.owner_kind, lc.owner) for lc in lifecycles}),
        lifecycles=sum(len(lc.runs) for lc in lifecycles), bytes=source.size_bytes,
        usage=summarise_usage(source.recorded_usage()))
