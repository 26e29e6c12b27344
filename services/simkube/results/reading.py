"""Reading a run's files back into typed rows: ``load_run`` and the per-file readers.

The report reads results a recorder wrote, possibly an older or a damaged one, so every
problem is a ``ResultsError`` naming the file, and the line for CSV files, instead of a
``KeyError`` deep in a plot. A run still being recorded reads fine: its summary says
``"state": "Running"`` and ``pods.csv`` may not exist yet (no pods then).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

from simkube.results import files, hpas
from simkube.results.model import (
    SCHEMA,
    DriverSummary,
    GroupSummary,
    PodRow,
    PodsSummary,
    ResultsError,
    RunResults,
    RunSummary,
    ScalingRow,
    TimelineRow,
)

T = TypeVar("T")


def _rows(path: Path, columns: tuple[str, ...] | None, *,
          older: tuple[str, ...] = ()) -> Iterator[tuple[int, dict[str, str]]]:
    """(line number, cells) of a CSV whose header equals ``columns`` (or ``older``, the
    header an earlier version wrote); any header when ``columns`` is None."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ResultsError(f"{path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ResultsError(f"{path} cannot be read: {exc}") from None
    reader = csv.reader(text.splitlines())
    header = next(reader, None)
    if header is None:
        raise ResultsError(f"{path}: line 1: the file is empty (no header row)")
    if columns is not None and tuple(header) not in (columns, older):
        raise ResultsError(f"{path}: line 1: header is {','.join(header)!r}, "
                           f"expected {','.join(columns)!r}")
    for number, cells in enumerate(reader, start=2):
        if not cells:
            continue
        if len(cells) != len(header):
            raise ResultsError(f"{path}: line {number}: {len(cells)} cells, "
                               f"the header has {len(header)}")
        yield number, dict(zip(header, cells, strict=True))


def _cell(path: Path, line: int, cells: Mapping[str, str], column: str,
          kind: Callable[[str], T]) -> T:
    try:
        return kind(cells[column])
    except ValueError:
        raise ResultsError(f"{path}: line {line}: column {column} has "
                           f"{cells[column]!r}, not a {kind.__name__}") from None


def _optional(path: Path, line: int, cells: Mapping[str, str], column: str) -> float | None:
    return None if cells[column] == "" else _cell(path, line, cells, column, float)


def read_timeline(path: Path) -> list[TimelineRow]:
    try:
        with path.open(encoding="utf-8") as handle:
            header = next(csv.reader(handle), [])
    except FileNotFoundError:
        raise ResultsError(f"{path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ResultsError(f"{path} cannot be read: {exc}") from None
    groups = [c[len(files.GROUP_PREFIX):] for c in header if c.startswith(files.GROUP_PREFIX)]
    expected = tuple(files.timeline_header(groups))
    rows = []
    for line, cells in _rows(path, expected):
        rows.append(TimelineRow(
            wall_s=_cell(path, line, cells, "wall_s", float),
            trace_s=_cell(path, line, cells, "trace_s", float),
            pods_pending=_cell(path, line, cells, "pods_pending", int),
            pods_running=_cell(path, line, cells, "pods_running", int),
            pods_succeeded=_cell(path, line, cells, "pods_succeeded", int),
            pods_failed=_cell(path, line, cells, "pods_failed", int),
            nodes_total=_cell(path, line, cells, "nodes_total", int),
            nodes={g: _cell(path, line, cells, files.GROUP_PREFIX + g, int) for g in groups},
            cost_usd=_cell(path, line, cells, files.COST, float)))
    return rows


def read_pods(path: Path) -> list[PodRow]:
    """pods.csv, also as written before the ``bound_unstarted`` column existed."""
    rows = []
    for line, cells in _rows(path, files.POD_COLUMNS, older=files.LEGACY_POD_COLUMNS):
        rows.append(PodRow(namespace=cells["namespace"], name=cells["name"],
                           group=cells["group"] or None, node=cells["node"] or None,
                           created_trace_s=_optional(path, line, cells, "created_trace_s"),
                           scheduled_trace_s=_optional(path, line, cells, "scheduled_trace_s"),
                           pending_s=_optional(path, line, cells, "pending_s"),
                           finished_trace_s=_optional(path, line, cells, "finished_trace_s"),
                           phase=cells["phase"],
                           bound_unstarted=cells.get("bound_unstarted") == "true"))
    return rows


def read_scaling(path: Path) -> list[ScalingRow]:
    return [ScalingRow(wall_s=_cell(path, line, cells, "wall_s", float),
                       trace_s=_cell(path, line, cells, "trace_s", float),
                       group=cells["group"], delta=_cell(path, line, cells, "delta", int),
                       nodes_after=_cell(path, line, cells, "nodes_after", int),
                       source=cells["source"], reason=cells.get("reason", ""))
            for line, cells in _rows(path, files.SCALING_COLUMNS,
                                     older=files.SCALING_COLUMNS_V1)]


def _build(cls: Callable[..., T], tree: Any, *, path: Path, where: str) -> T:
    if not isinstance(tree, dict):
        raise ResultsError(f"{path}: {where} is not an object")
    try:
        return cls(**tree)
    except TypeError as exc:
        raise ResultsError(f"{path}: {where}: {exc}") from None


def read_summary(path: Path) -> RunSummary:
    try:
        tree = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ResultsError(f"{path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ResultsError(f"{path} cannot be read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ResultsError(f"{path}: line {exc.lineno}: not JSON: {exc.msg}") from None
    if not isinstance(tree, dict):
        raise ResultsError(f"{path}: the top level is not an object")
    if tree.get("schema") != SCHEMA:
        raise ResultsError(f"{path}: schema {tree.get('schema')!r} is not {SCHEMA}, "
                           "the one this version reads")
    groups = tree.get("groups")
    if not isinstance(groups, dict):
        raise ResultsError(f"{path}: groups is not an object")
    tree["groups"] = {str(g): _build(GroupSummary, v, path=path, where=f"groups.{g}")
                      for g, v in groups.items()}
    tree["pods"] = _build(PodsSummary, tree.get("pods"), path=path, where="pods")
    tree["driver"] = _build(DriverSummary, tree.get("driver", {}), path=path, where="driver")
    return _build(RunSummary, tree, path=path, where="the summary")


def load_run(run_dir: Path) -> RunResults:
    """Every file of ``run_dir`` (``<results>/<simulation>/run-<n>``), typed."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise ResultsError(f"{run_dir} is not a run directory (it does not exist)")
    pods_path = run_dir / files.PODS
    scaling_path = run_dir / files.SCALING
    return RunResults(
        run_dir=run_dir, timeline=tuple(read_timeline(run_dir / files.TIMELINE)),
        pods=tuple(read_pods(pods_path)) if pods_path.exists() else (),
        scaling=tuple(read_scaling(scaling_path)) if scaling_path.exists() else (),
        summary=read_summary(run_dir / files.SUMMARY),
        hpas=tuple(hpas.read(run_dir / hpas.HPAS)))
