"""The summary tables as plain text grids, and their rich rendering for the terminal.

A grid (header, sections of rows of strings) is built once and rendered twice, by rich here
and as HTML by ``simkube.report.html``, so the terminal and the page always agree on every
number and its formatting. A first ``run`` section names each run's autoscaler (as the
recorder observed it), the one row that is a name rather than a number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rich.table import Table

from simkube.report.compare import Comparison, percent
from simkube.report.loading import RunData
from simkube.report.metrics import format_value, metric_rows, metric_values


@dataclass(frozen=True, kw_only=True)
class Grid:
    title: str
    header: list[str]
    sections: list[tuple[str, list[list[str]]]] = field(default_factory=list)
    highlighted: set[tuple[int, int]] = field(default_factory=set)  # (section, row) that differ


def report_grid(runs: Sequence[RunData]) -> Grid:
    """One row per metric, one column per run."""
    metrics = metric_rows(runs)
    values = [metric_values(run, rows=metrics) for run in runs]
    grid = Grid(title=_title(runs), header=["metric", *(run.label for run in runs)])
    if any(run.autoscaler for run in runs):
        _section(grid, "run").append(["autoscaler", *(run.autoscaler or "-" for run in runs)])
    for metric in metrics:
        row = [metric.label, *(format_value(v.get(metric.key), kind=metric.kind)
                               for v in values)]
        _section(grid, metric.section).append(row)
    return grid


def compare_grid(comparison: Comparison) -> Grid:
    """The first run's value, then each other run's value with its difference from it."""
    runs = comparison.runs
    header = ["metric", runs[0].label]
    for run in runs[1:]:
        header += [run.label, "Δ", "Δ %"]
    grid = Grid(title=f"comparison against {runs[0].label}", header=header)
    names = [run.autoscaler or "-" for run in runs]
    if any(run.autoscaler for run in runs):
        cells = ["autoscaler", names[0]]
        for name in names[1:]:
            cells += [name, "", "" if name == names[0] else "differs"]
        _section(grid, "run").append(cells)
        if any(name != names[0] for name in names[1:]):
            grid.highlighted.add((0, 0))
    for row in comparison.rows:
        kind = row.metric.kind
        cells = [row.metric.label, format_value(row.values[0], kind=kind)]
        for index in range(1, len(runs)):
            absolute = row.absolute[index]
            cells += [format_value(row.values[index], kind=kind), _signed(absolute, kind=kind),
                      percent(row.relative[index])]
        rows = _section(grid, row.metric.section)
        relatives = [abs(r) for r in row.relative[1:] if r is not None]
        if any(r > comparison.threshold for r in relatives):
            grid.highlighted.add((len(grid.sections) - 1, len(rows)))
        rows.append(cells)
    return grid


def rich_table(grid: Grid) -> Table:
    table = Table(title=grid.title, title_justify="left")
    for index, name in enumerate(grid.header):
        table.add_column(name, justify="left" if index == 0 else "right",
                         no_wrap=index > 0)
    for section_index, (_name, rows) in enumerate(grid.sections):
        if section_index:
            table.add_section()
        for row_index, row in enumerate(rows):
            style = "bold yellow" if (section_index, row_index) in grid.highlighted else None
            table.add_row(*row, style=style)
    return table


def _section(grid: Grid, name: str) -> list[list[str]]:
    if not grid.sections or grid.sections[-1][0] != name:
        grid.sections.append((name, []))
    return grid.sections[-1][1]


def _signed(value: float | None, *, kind: str) -> str:
    if value is None:
        return "-"
    text = format_value(abs(value), kind=kind)
    return "0" if value == 0 else ("+" if value > 0 else "-") + text


def _title(runs: Sequence[RunData]) -> str:
    if len(runs) == 1:
        return f"simulation report: {runs[0].label}"
    return f"simulation report: {len(runs)} runs of {runs[0].label.split('/')[0]}"
