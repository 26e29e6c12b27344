"""How far a replay is from the ground truth, figure by figure, all on the trace-time axis.

Pure functions of two loaded runs (``simkube.results.load_run``), so the arithmetic is tested
without a cluster. Every relative difference is signed, replay minus truth over truth (+4 %
means the replay used 4 % more), except the nodes curve: the area between the two
total-nodes curves over the area under the truth's (``simkube.report.curve_difference``:
time-weighted mean |truth - replay| ÷ time-weighted mean truth, over the span both cover),
which is a distance and never negative. A difference the truth cannot scale (a truth of 0
against a replay that is not) is infinite, and missing data (no pod scheduled) is ``None``;
both count as outside any limit.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from simkube.core.errors import SimkubeError
from simkube.report import curve_difference
from simkube.results import RunResults

Value = float | None
RELATIVE = ("nodes_curve", "node_hours", "cost", "pending_p50", "pending_p90")
COUNTS = ("scale_ups", "scale_downs")
# The goal per figure (DESIGN §7, issue #12): the highest speed that keeps all of them.
LIMITS: Mapping[str, float] = {"nodes_curve": 0.05, "cost": 0.05, "pending_p90": 0.10}


@dataclass(frozen=True, kw_only=True)
class Comparison:
    speed: float
    repetition: int
    errors: Mapping[str, Value]  # RELATIVE name -> relative difference
    truth: Mapping[str, Value]   # headline numbers of the truth ...
    replay: Mapping[str, Value]  # ... and of the replay (see ``headlines``)
    note: str | None = None      # why a figure is missing


def headlines(run: RunResults) -> dict[str, Value]:
    """What is compared, read from a run's summary (scale steps are per group, summed)."""
    summary = run.summary
    return {"node_hours": summary.node_hours, "cost_usd": summary.cost_usd,
            "pending_p50_s": summary.pods.pending_p50_s,
            "pending_p90_s": summary.pods.pending_p90_s,
            "scale_ups": sum(g.scale_ups for g in summary.groups.values()),
            "scale_downs": sum(g.scale_downs for g in summary.groups.values()),
            "peak_nodes": max((row.nodes_total for row in run.timeline), default=0),
            "pods_seen": summary.pods.seen, "never_scheduled": summary.pods.never_scheduled}


def relative(truth: Value, replay: Value) -> Value:
    """(replay - truth) / truth; ±inf when only the truth is 0; None when either is missing."""
    if truth is None or replay is None:
        return None
    if truth == 0:
        return 0.0 if replay == 0 else math.copysign(math.inf, replay)
    return (replay - truth) / abs(truth)


def compare(*, truth: RunResults, replay: RunResults, speed: float,
            repetition: int) -> Comparison:
    ours, theirs = headlines(truth), headlines(replay)
    note = None
    nodes_curve: Value
    try:
        nodes_curve = curve_difference(truth, replay, column="nodes_total").relative
    except SimkubeError as exc:  # no samples, or curves that do not overlap
        nodes_curve, note = None, f"nodes curve: {exc.message}"
    errors = {"nodes_curve": nodes_curve,
              "node_hours": relative(ours["node_hours"], theirs["node_hours"]),
              "cost": relative(ours["cost_usd"], theirs["cost_usd"]),
              "pending_p50": relative(ours["pending_p50_s"], theirs["pending_p50_s"]),
              "pending_p90": relative(ours["pending_p90_s"], theirs["pending_p90_s"])}
    return Comparison(speed=speed, repetition=repetition, errors=errors, truth=ours,
                      replay=theirs, note=note)


def worst(comparisons: Iterable[Comparison]) -> dict[str, Value]:
    """Per figure, the repetition's value farthest from 0 (sign kept); None if any is missing."""
    result: dict[str, Value] = {}
    chosen = list(comparisons)
    for name in RELATIVE:
        values = [c.errors.get(name) for c in chosen]
        present = [v for v in values if v is not None]
        result[name] = (None if not values or len(present) < len(values)
                        else max(present, key=abs))
    return result


def within(errors: Mapping[str, Value],
           limits: Mapping[str, float] = LIMITS) -> dict[str, bool]:
    return {name: (value := errors.get(name)) is not None and abs(value) <= limit
            for name, limit in limits.items()}


def spread_limits(real_time: Mapping[str, Value]) -> dict[str, float] | None:
    """Each limit widened to what replaying at speed 1 already misses by (``real_time``: the
    worst 1x repetition), or None when a 1x figure is missing. Two runs of one workload at
    the same speed differ where the autoscaler's plan turns on sub-second timing: a faster
    replay cannot be judged closer to the truth than the truth is to itself."""
    limits = {}
    for name, limit in LIMITS.items():
        value = real_time.get(name)
        if value is None or math.isinf(value):
            return None
        limits[name] = max(limit, abs(value))
    return limits


def highest_speed(worst_by_speed: Mapping[float, Mapping[str, Value]],
                  limits: Mapping[str, float] = LIMITS) -> tuple[float | None, str | None]:
    """The highest speed up to which every tested speed keeps every limit, and what broke
    first above it (``None`` when nothing did). One noisy pass above a failure does not count."""
    best = None
    for speed in sorted(worst_by_speed):
        kept = within(worst_by_speed[speed], limits)
        missed = [name for name, ok in kept.items() if not ok]
        if missed:
            return best, f"speed {speed:g}: {', '.join(missed)}"
        best = speed
    return best, None


def percent(value: Value) -> float | str | None:
    """A relative difference as a JSON-safe signed percentage (1 decimal)."""
    if value is None:
        return None
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return round(value * 100, 1)


def describe(errors: Mapping[str, Value]) -> str:
    """One line for people: ``nodes curve 4.2 %, node hours +3.0 %, …``."""
    def shown(name: str) -> str:
        value = percent(errors.get(name))
        if value is None or isinstance(value, str):
            return f"{name.replace('_', ' ')} {value or 'n/a'}"
        sign = "" if name == "nodes_curve" else "+" if value >= 0 else "-"
        return f"{name.replace('_', ' ')} {sign}{abs(value):.1f} %"
    return ", ".join(shown(name) for name in RELATIVE)


def as_json(comparison: Comparison) -> dict[str, object]:
    figures: dict[str, object] = {f"{name}_pct": percent(comparison.errors.get(name))
                                  for name in RELATIVE}
    for name in (*COUNTS, "peak_nodes", "never_scheduled", "pods_seen",
                 "node_hours", "cost_usd", "pending_p50_s", "pending_p90_s"):
        figures[name] = {"truth": comparison.truth.get(name),
                         "replay": comparison.replay.get(name)}
    if comparison.note:
        figures["note"] = comparison.note
    return figures


def by_speed(comparisons: Sequence[Comparison]) -> dict[float, list[Comparison]]:
    grouped: dict[float, list[Comparison]] = {}
    for comparison in comparisons:
        grouped.setdefault(comparison.speed, []).append(comparison)
    return grouped
