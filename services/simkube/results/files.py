"""Writing the run's files: CSV rows appended and flushed as they happen, the rest atomically.

``timeline.csv`` and ``scaling.csv`` grow by whole lines, flushed at once, so a crash loses at
most the row being written; a torn last line is cut off when a restarted recorder reopens the
file. ``pods.csv`` and ``summary.json`` are replaced whole (temporary file + rename), so a
reader never sees half of one. A new node group appearing mid-run widens the timeline's
header: the file is rewritten once with the new column (0 in earlier rows).
Numbers: times with 3 decimals (milliseconds), dollars and node hours with 6.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO

from simkube.results.model import PodRow, RunSummary, ScalingRow, TimelineRow

TIMELINE = "timeline.csv"
PODS = "pods.csv"
SCALING = "scaling.csv"
SUMMARY = "summary.json"
TIMELINE_HEAD = ("wall_s", "trace_s", "pods_pending", "pods_running", "pods_succeeded",
                 "pods_failed", "nodes_total")
GROUP_PREFIX = "nodes."
COST = "cost_usd"
LEGACY_POD_COLUMNS = ("namespace", "name", "group", "node", "created_trace_s",
                      "scheduled_trace_s", "pending_s", "finished_trace_s", "phase")
POD_COLUMNS = (*LEGACY_POD_COLUMNS, "bound_unstarted")
SCALING_COLUMNS = ("wall_s", "trace_s", "group", "delta", "nodes_after", "source", "reason")
SCALING_COLUMNS_V1 = SCALING_COLUMNS[:-1]  # before autoscaler rows said why
TIME_DIGITS = 3
MONEY_DIGITS = 6


def number(value: float | None, *, digits: int = TIME_DIGITS) -> str:
    """Shortest text for ``value`` rounded to ``digits`` decimals; '' for None."""
    if value is None:
        return ""
    text = f"{round(value, digits):.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def _line(cells: Iterable[str]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(list(cells))
    return buffer.getvalue()


def timeline_header(groups: Sequence[str]) -> list[str]:
    return [*TIMELINE_HEAD, *(GROUP_PREFIX + g for g in groups), COST]


def timeline_line(row: TimelineRow, groups: Sequence[str]) -> str:
    return _line([number(row.wall_s), number(row.trace_s), str(row.pods_pending),
                  str(row.pods_running), str(row.pods_succeeded), str(row.pods_failed),
                  str(row.nodes_total), *(str(row.nodes.get(g, 0)) for g in groups),
                  number(row.cost_usd, digits=MONEY_DIGITS)])


def scaling_line(row: ScalingRow) -> str:
    return _line([number(row.wall_s), number(row.trace_s), row.group, str(row.delta),
                  str(row.nodes_after), row.source, row.reason])


def pod_line(row: PodRow) -> str:
    return _line([row.namespace, row.name, row.group or "", row.node or "",
                  number(row.created_trace_s), number(row.scheduled_trace_s),
                  number(row.pending_s), number(row.finished_trace_s), row.phase,
                  "true" if row.bound_unstarted else ""])


def atomic_write(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    with temporary.open("w", encoding="utf-8") as out:
        out.write(text)
        out.flush()
        os.fsync(out.fileno())
    temporary.replace(path)


def repair_tail(path: Path) -> None:
    """Cut a torn last line (no newline: the writer died mid-row)."""
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with path.open("r+b") as out:
            out.truncate(data.rfind(b"\n") + 1)


def write_pods(path: Path, rows: Iterable[PodRow]) -> None:
    atomic_write(path, _line(POD_COLUMNS) + "".join(pod_line(row) for row in rows))


def summary_json(summary: RunSummary) -> str:
    tree = dataclasses.asdict(summary)
    ordered = {"schema": tree.pop("schema"), **tree}
    return json.dumps(ordered, indent=2, allow_nan=False) + "\n"


def write_summary(path: Path, summary: RunSummary) -> None:
    atomic_write(path, summary_json(summary))


class AppendFile:
    """A CSV file opened for appending whole, flushed lines under a fixed header."""

    def __init__(self, path: Path, header: Sequence[str]) -> None:
        self.path = path
        repair_tail(path)
        fresh = not path.exists() or path.stat().st_size == 0
        self._out: IO[str] = path.open("a", encoding="utf-8")
        if fresh:
            self.write(_line(header))

    def write(self, text: str) -> None:
        self._out.write(text)
        self._out.flush()

    def close(self) -> None:
        self._out.close()


class TimelineFile:
    """timeline.csv: appends rows; rewrites itself once when a new group column appears."""

    def __init__(self, path: Path, *, groups: Sequence[str], rows: Sequence[TimelineRow]) -> None:
        self.path = path
        self._groups = list(groups)
        self._rows = list(rows)  # only kept to rewrite the file; see append()
        self._file = AppendFile(path, timeline_header(self._groups))

    def append(self, row: TimelineRow) -> None:
        if list(row.nodes) != self._groups:
            self._groups = list(row.nodes)
            self._file.close()
            atomic_write(self.path, _line(timeline_header(self._groups)) + "".join(
                timeline_line(old, self._groups) for old in self._rows))
            self._file = AppendFile(self.path, timeline_header(self._groups))
        self._file.write(timeline_line(row, self._groups))
        self._rows.append(row)

    @property
    def rows(self) -> list[TimelineRow]:
        return self._rows

    def close(self) -> None:
        self._file.close()
