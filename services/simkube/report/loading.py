"""One run's results in the shape the report draws from, read through ``simkube.results``.

The recorder's package owns the files' format and their reader (``load_run``); this module
only reshapes what that reader returns into columns (a plot wants a curve per column, not a
list of rows) and gives every run a label, so the rest of the report never touches a file
or depends on the reader's row types. Unreadable results become ``ConfigError`` (exit 2).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simkube.core.errors import ConfigError, SimkubeError

if TYPE_CHECKING:
    from simkube.results.model import HpaRow, RunResults

GROUP_PREFIX = "nodes."
_COLUMNS = ("wall_s", "trace_s", "pods_pending", "pods_running", "pods_succeeded",
            "pods_failed", "nodes_total", "cost_usd")


@dataclass(frozen=True, kw_only=True)
class RunData:
    label: str                          # "NAME/run-N"
    directory: Path
    summary: Mapping[str, Any]          # summary.json as a tree
    timeline: Mapping[str, list[float]]  # column -> values, one per sample, in file order
    groups: tuple[str, ...]             # node groups, from the nodes.<group> columns
    pending_s: tuple[float, ...]        # time to schedule of every scheduled pod
    # Per HPA (results/hpas.py): "trace_s", "desired", "current" columns of its decisions,
    # from its first computed desiredReplicas on; empty for runs without HPAs.
    hpas: Mapping[str, Mapping[str, list[float]]] = field(default_factory=dict)

    @property
    def autoscaler(self) -> str:
        """Which autoscaler ran, as the recorder observed it ("" for older runs)."""
        return str(self.summary.get("autoscaler") or "")

    @property
    def title(self) -> str:
        """The label, with the autoscaler when one ran and the label does not say it
        (``nightly/run-2 (karpenter)``): what a reader needs to tell runs apart."""
        name = self.autoscaler
        if name in ("", "none") or name in self.label:
            return self.label
        return f"{self.label} ({name})"


def load(run_dir: Path, *, label: str | None = None) -> RunData:
    """Read ``run_dir`` (``.../NAME/run-N``) with the recorder's reader."""
    # Lazily: simkube.results carries the recorder and its Kubernetes client (0.4 s of
    # imports), which every other skctl command would pay for at start.
    from simkube.results import load_run  # noqa: PLC0415

    try:
        results = load_run(run_dir)
    except SimkubeError as exc:
        # The reader's message already names the file (and the line).
        raise ConfigError(f"unreadable results: {exc.message}", hint=exc.hint) from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"cannot read the results in {run_dir}: {exc}") from None
    return as_run_data(results, label=label, directory=run_dir)


def as_run_data(results: RunResults | RunData, *, label: str | None = None,
                directory: Path | None = None) -> RunData:
    """Reshape a ``load_run`` result (a ``RunData`` passes through unchanged)."""
    if isinstance(results, RunData):
        return results
    where = directory or results.run_dir
    if not results.timeline:
        raise ConfigError(f"the timeline in {where} has no samples",
                          hint="the run may not have started recording yet")
    groups = tuple(sorted({g for row in results.timeline for g in row.nodes}
                          | set(results.groups)))
    timeline: dict[str, list[float]] = {column: [] for column in _COLUMNS}
    timeline.update({f"{GROUP_PREFIX}{group}": [] for group in groups})
    for row in results.timeline:
        for column in _COLUMNS:
            timeline[column].append(float(getattr(row, column)))
        for group in groups:
            timeline[f"{GROUP_PREFIX}{group}"].append(float(row.nodes.get(group, 0)))
    pending = tuple(pod.pending_s for pod in results.pods if pod.pending_s is not None)
    summary = _plain(results.summary)
    name = label or f"{results.summary.simulation}/run-{results.summary.run}"
    return RunData(label=name, directory=where, summary=summary, timeline=timeline,
                   groups=groups, pending_s=pending,
                   hpas=_hpa_curves(results.hpas, end_s=results.timeline[-1].trace_s))


def _hpa_curves(rows: Sequence[HpaRow], *, end_s: float) -> dict[str, dict[str, list[float]]]:
    """Each HPA's step curves, held to ``end_s`` (the run's last row) like the timeline."""
    curves: dict[str, dict[str, list[float]]] = {}
    for row in rows:
        if row.desired <= 0:  # not computed yet: no decision to draw
            continue
        curve = curves.setdefault(row.hpa, {"trace_s": [], "desired": [], "current": []})
        curve["trace_s"].append(row.trace_s)
        curve["desired"].append(float(row.desired))
        curve["current"].append(float(row.current))
    for curve in curves.values():
        if curve["trace_s"][-1] < end_s:
            for column, values in curve.items():
                values.append(end_s if column == "trace_s" else values[-1])
    return curves


def _plain(value: Any) -> Any:
    """Dataclasses and mappings as plain dicts, all the way down (a JSON-like tree)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    return value
