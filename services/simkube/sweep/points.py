"""A sweep's points: the base with one value of each axis applied, each checked as a whole.

An axis can be valid on its own and a combination still not run: ``minSize`` 5 with
``maxSize`` 3, an initial scheduler backoff above the maximum one, a Cluster Autoscaler flag
on a point that runs Karpenter. Every point is therefore built and checked while planning,
and a point that cannot be built is an error naming it, its index and its settings, before
any environment starts. A point also knows which of its settings differ from the base: that
is what the plan prints and what the report labels its points with.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from simkube.core.durations import parse_duration
from simkube.core.errors import ConfigError
from simkube.core.timers import BY_KEY, Component
from simkube.env.autoscalers import cluster_autoscaler as ca
from simkube.env.autoscalers.kinds import AutoscalerKind
from simkube.simulation.timers import TimerSpecError, timer_settings, timer_spec
from simkube.sweep import nodegroups
from simkube.sweep.axes import Axis, AxisKind, NodeGroupField, TraceEdit, Value, duration_text
from simkube.sweep.sampling import choose
from simkube.sweep.spec import Sweep

BASE_LABEL = "base"
# The autoscaler whose timers a component's section holds; others suit both.
OWNER = {Component.CLUSTER_AUTOSCALER: AutoscalerKind.CLUSTER_AUTOSCALER,
         Component.KARPENTER: AutoscalerKind.KARPENTER}


@dataclass(frozen=True, kw_only=True)
class Point:
    index: int
    settings: tuple[tuple[Axis, Value], ...]  # one value per axis
    differs: tuple[str, ...]  # the settings whose value is not the base's
    autoscaler: AutoscalerKind
    timers: Mapping[str, str]  # the base's with the point's on top
    ca_flags: tuple[str, ...]  # --name=value, on top of the environment's tuning
    node_groups: Mapping[str, Any] | None  # the edited document; None: the base file as is
    trace_edits: tuple[tuple[TraceEdit, float], ...]

    @property
    def label(self) -> str:
        return ", ".join(self.differs) or BASE_LABEL


def build_points(sweep: Sweep) -> list[Point]:
    """Every chosen point, in grid order, numbered from 0; ``ConfigError`` naming the first
    point that cannot be built."""
    source = nodegroups.base_file(sweep.base.node_groups)
    document = nodegroups.load_document(source)
    chosen = choose([len(axis.values) for axis in sweep.axes], sweep.sampling)
    points = []
    for index, combination in enumerate(chosen):
        settings = tuple((axis, axis.values[i]) for axis, i in zip(sweep.axes, combination,
                                                                   strict=True))
        where = f"point {index} ({', '.join(axis.setting(v) for axis, v in settings)})"
        points.append(_point(sweep, index, settings, document=document, where=where,
                             source=source))
    return points


def _point(sweep: Sweep, index: int, settings: Sequence[tuple[Axis, Value]], *,
           document: Mapping[str, Any], where: str, source: Any) -> Point:
    chosen = {axis.kind: value for axis, value in settings}
    autoscaler = AutoscalerKind(str(chosen.get(AxisKind.AUTOSCALER, sweep.base.autoscaler)))
    timers = dict(sweep.base.timers)
    flags, edits, group_edits = [], [], []
    for axis, value in settings:
        if axis.kind is AxisKind.TIMER:
            owner = OWNER.get(BY_KEY[axis.target].component)
            if owner is not None and owner is not autoscaler:
                raise ConfigError(f"{where}: timer {axis.target} is {owner.value}'s, and this "
                                  f"point runs {autoscaler.value}")
            timers[axis.target] = str(value)
        elif axis.kind is AxisKind.CA_FLAG:
            if autoscaler is not AutoscalerKind.CLUSTER_AUTOSCALER:
                raise ConfigError(f"{where}: {axis.target} is a Cluster Autoscaler flag, and "
                                  f"this point runs {autoscaler.value}")
            flags.append(f"{axis.target}={value}")
        elif axis.kind is AxisKind.NODE_GROUPS and axis.field is not None:
            group_edits.append((axis.group, axis.field, value))
        elif axis.kind is AxisKind.TRACE_EDIT and value != 1.0:  # x1 is the trace as it is
            edits.append((TraceEdit(axis.target), float(value)))
    try:
        timer_settings(timer_spec(timers))
    except TimerSpecError as exc:
        raise ConfigError(f"{where}: {exc.message}") from None
    edited = (nodegroups.apply(document, group_edits, source=source, where=where)
              if group_edits else None)
    if edited == document:  # the base's own values: the base file serves
        edited = None
    differs = tuple(axis.setting(value) for axis, value in settings
                    if _differs(sweep, axis, value, document=document))
    return Point(index=index, settings=tuple(settings), differs=differs, autoscaler=autoscaler,
                 timers=timers, ca_flags=tuple(flags), node_groups=edited,
                 trace_edits=tuple(edits))


def _differs(sweep: Sweep, axis: Axis, value: Value, *, document: Mapping[str, Any]) -> bool:
    """Whether ``value`` is not what the base runs with on this axis."""
    base = _base_value(sweep, axis, document=document)
    return bool(_compared(axis, value) != _compared(axis, base))


def _base_value(sweep: Sweep, axis: Axis, *, document: Mapping[str, Any]) -> Any:
    """The base's value on ``axis``; None where the base leaves it to a default."""
    if axis.kind is AxisKind.AUTOSCALER:
        return sweep.base.autoscaler.value
    if axis.kind is AxisKind.TRACE_EDIT:
        return 1.0
    if axis.kind is AxisKind.TIMER:
        return sweep.base.timers.get(axis.target)
    if axis.kind is AxisKind.CA_FLAG:  # the environment's tuning (env up's defaults)
        return dict(flag.partition("=")[::2] for flag in ca.merge_flags(())).get(axis.target)
    if axis.field is None:
        return None
    return nodegroups.current(document, group=axis.group, field=axis.field)


def _compared(axis: Axis, value: Any) -> Any:
    """``value`` as it acts: durations in milliseconds (``60s`` is ``1m``), an unset timer
    as its catalogue default."""
    if axis.kind is AxisKind.TIMER:
        given = {} if value is None else {axis.target: value}
        return timer_settings(timer_spec(given)).trace_ms(BY_KEY[axis.target])
    if axis.field is NodeGroupField.DELAY and value is not None:
        return parse_duration(duration_text(value), field=axis.target, allow_zero=True)
    return value
