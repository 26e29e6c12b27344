"""Replicas over time per HorizontalPodAutoscaler, and its scale events.

The HPA's own status says what it decided (``desiredReplicas``) and what its target had
(``currentReplicas``); a watch on HPAs in the run's namespaces turns each change of either into
a row of ``hpas.csv`` (``wall_s, trace_s, hpa, desired, current``), stamped like the timeline.
An HPA is named without the run's namespace prefix (``shop/web``), so a truth and its
replays, or two replays, name it alike.

A scale event is a rescale of the target: a change of ``desiredReplicas`` between two values
the controller computed, or its first computed value when it differs from the replicas the
target had then; the status a new HPA starts with (no ``desiredReplicas`` yet, or 0) is not
one. The summary
gives per HPA the number of scale-ups and -downs, the peak, minimum and final desired
replicas and the time-weighted mean of desired and current replicas over trace time (the
area under the curve divided by its span, the figure a what-if compares).
"""

from __future__ import annotations

import csv
import itertools
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from simkube.results.files import AppendFile
from simkube.results.karpenter_scaling import At
from simkube.results.model import HpaRow, ResultsError

HPAS = "hpas.csv"
COLUMNS = ("wall_s", "trace_s", "hpa", "desired", "current")
__all__ = ["COLUMNS", "HPAS", "HpaRow", "HpaTracker", "read", "scale_events", "summaries"]


def scale_events(decisions: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """(scale-ups, scale-downs) in observed (desiredReplicas, currentReplicas) pairs: each
    change of the desired count, and the first decision when it differs from the replicas
    the target had (the HPA rescaled it). Zeros (nothing computed yet) are not decisions."""
    decided = [(desired, current) for desired, current in decisions if desired > 0]
    if not decided:
        return 0, 0
    first_desired, first_current = decided[0]
    steps = [(first_current, first_desired)] if first_current > 0 else []
    steps += [(a[0], b[0]) for a, b in itertools.pairwise(decided)]
    return (sum(1 for a, b in steps if b > a), sum(1 for a, b in steps if b < a))


def _mean(times: Sequence[float], values: Sequence[int], end_s: float) -> float:
    """Time-weighted mean of a step curve from its first sample to ``end_s``."""
    span = end_s - times[0]
    if span <= 0:
        return float(values[-1])
    edges = [*times[1:], end_s]
    return sum((min(b, end_s) - a) * v for a, b, v in zip(times, edges, values, strict=True)
               if b > a) / span


def summaries(rows: Iterable[HpaRow], *, end_trace_s: float | None = None) -> dict[str, Any]:
    """Per HPA: scale events, desired replicas' peak/min/final, mean desired and current."""
    by_hpa: dict[str, list[HpaRow]] = {}
    for row in rows:
        by_hpa.setdefault(row.hpa, []).append(row)
    result: dict[str, Any] = {}
    for hpa in sorted(by_hpa):
        own = [row for row in by_hpa[hpa] if row.desired > 0] or by_hpa[hpa]
        ups, downs = scale_events([(row.desired, row.current) for row in own])
        end = max(end_trace_s if end_trace_s is not None else own[-1].trace_s, own[-1].trace_s)
        times = [row.trace_s for row in own]
        result[hpa] = {
            "scale_events": ups + downs, "scale_ups": ups, "scale_downs": downs,
            "peak_desired": max(row.desired for row in own),
            "min_desired": min(row.desired for row in own),
            "final_desired": own[-1].desired,
            "mean_desired": round(_mean(times, [row.desired for row in own], end), 3),
            "mean_current": round(_mean(times, [row.current for row in own], end), 3)}
    return result


class HpaTracker:
    """HPA objects in, a row for each change of (desired, current) out."""

    def __init__(self, *, prefix: str, rows: Sequence[HpaRow] = ()) -> None:
        self._prefix = f"{prefix}-"
        self.rows = list(rows)
        self._last = {row.hpa: (row.desired, row.current) for row in rows}

    def observe(self, obj: dict[str, Any], *, at: At) -> HpaRow | None:
        metadata = obj.get("metadata") or {}
        namespace = str(metadata.get("namespace") or "")
        if not namespace.startswith(self._prefix):
            return None
        status = obj.get("status") or {}
        hpa = f"{namespace[len(self._prefix):]}/{metadata.get('name', '')}"
        state = (_count(status.get("desiredReplicas")), _count(status.get("currentReplicas")))
        if self._last.get(hpa) == state:
            return None
        self._last[hpa] = state
        row = HpaRow(wall_s=round(at.wall_s, 3), trace_s=round(at.trace_s, 3), hpa=hpa,
                     desired=state[0], current=state[1])
        self.rows.append(row)
        return row


def _count(value: Any) -> int:
    return value if isinstance(value, int) and value >= 0 else 0


def line(row: HpaRow) -> str:
    return f"{row.wall_s},{row.trace_s},{row.hpa},{row.desired},{row.current}\n"


def open_file(run_dir: Path) -> AppendFile:
    return AppendFile(run_dir / HPAS, COLUMNS)


def read(path: Path) -> list[HpaRow]:
    """The rows of an ``hpas.csv``; none when the run recorded no HPA file."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise ResultsError(f"{path} cannot be read: {exc}") from None
    lines = list(csv.reader(text.splitlines()))
    if not lines or tuple(lines[0]) != COLUMNS:
        raise ResultsError(f"{path}: line 1: header is not {','.join(COLUMNS)!r}")
    rows = []
    for number, cells in enumerate(lines[1:], start=2):
        if not cells:
            continue
        try:
            wall_s, trace_s, hpa, desired, current = cells
            rows.append(HpaRow(wall_s=float(wall_s), trace_s=float(trace_s), hpa=hpa,
                               desired=int(desired), current=int(current)))
        except ValueError:
            raise ResultsError(f"{path}: line {number}: not wall_s,trace_s,hpa,desired,"
                               f"current: {','.join(cells)!r}") from None
    return rows
