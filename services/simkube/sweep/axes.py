"""The axes of a sweep: which setting varies, and over which values.

Five kinds, each its own key in the sweep file, because each reaches a run through a
different door: a Simulation timer (the spec; sk-ctrl scales it by the speed), a Cluster
Autoscaler flag (the environment's command line), a node-groups field (the file sk-cloudprov
and Karpenter read), the autoscaler itself (which one ``env up`` starts) and a trace what-if
(the trace replayed, through ``skctl trace edit``'s steps). Each value is checked here by the
rule its door applies later, so a typo stops the sweep before the first environment starts.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from simkube.core.durations import parse_duration
from simkube.core.errors import ConfigError, SimkubeError
from simkube.core.timers import BY_KEY
from simkube.env.autoscalers import cluster_autoscaler as ca
from simkube.env.autoscalers.kinds import AutoscalerKind
from simkube.simulation.timers import TimerSpecError, timer_settings, timer_spec
from simkube.trace.tools.edit_steps import number

Value = str | int | float


class AxisKind(StrEnum):
    TIMER = "timer"
    CA_FLAG = "caFlag"
    NODE_GROUPS = "nodeGroups"
    AUTOSCALER = "autoscaler"
    TRACE_EDIT = "traceEdit"


class NodeGroupField(StrEnum):
    PRICE = "pricePerHour"
    INSTANCE_TYPE = "instanceType"  # the group's shape.instanceType
    DELAY = "provisioning.delay"
    MIN_SIZE = "minSize"
    MAX_SIZE = "maxSize"


class TraceEdit(StrEnum):
    REPLICAS = "replicas"  # every workload's spec.replicas times k
    REQUESTS = "requests"  # every container's CPU and memory requests (and limits) times k


@dataclass(frozen=True, kw_only=True)
class Axis:
    kind: AxisKind
    target: str  # timer key, flag (--expander), "group.field", "autoscaler", edit name
    values: tuple[Value, ...]
    group: str = ""  # nodeGroups only
    field: NodeGroupField | None = None  # nodeGroups only

    def setting(self, value: Value) -> str:
        """``value`` on this axis as the plan, table and plots name it."""
        if self.kind is AxisKind.TRACE_EDIT:
            return f"{self.target} x{value:g}"
        if isinstance(value, float):
            return f"{self.target}={value:g}"
        return f"{self.target}={value}"


def parse_axis(raw: Any, *, where: str) -> Axis:
    """One entry of ``axes``; a ``ConfigError`` naming ``where`` and the field otherwise."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be a mapping such as "
                          "{timer: clusterAutoscaler.scan-interval, values: [10s, 30s]}")
    kinds = [kind for kind in AxisKind if kind.value in raw]
    unknown = sorted(str(key) for key in raw if key not in {*AxisKind, "values"})
    if unknown or len(kinds) != 1:
        found = ", ".join(unknown or [kind.value for kind in kinds]) or "none"
        raise ConfigError(f"{where}: an axis is exactly one of "
                          f"{', '.join(kind.value for kind in AxisKind)} (found: {found})")
    kind = kinds[0]
    if kind is AxisKind.AUTOSCALER:  # `autoscaler: [cluster-autoscaler, karpenter]`
        if "values" in raw:
            raise ConfigError(f"{where}.values: the autoscaler axis lists its values itself")
        values = _values(raw["autoscaler"], where=f"{where}.autoscaler")
        return Axis(kind=kind, target="autoscaler", values=tuple(
            _autoscaler(value, where=f"{where}.autoscaler[{i}]") for i, value in enumerate(values)))
    values = _values(raw.get("values"), where=f"{where}.values")
    parse = _PARSERS[kind]
    return parse(raw[kind.value], values, where)


def _values(raw: Any, *, where: str) -> list[Any]:
    if not isinstance(raw, list) or not raw:
        raise ConfigError(f"{where} must list at least one value")
    for index, value in enumerate(raw):
        if isinstance(value, (dict, list)) or value is None:
            raise ConfigError(f"{where}[{index}] {value!r} is not a single value")
        if value in raw[:index]:
            raise ConfigError(f"{where} has {value!r} twice")
    return raw


def _autoscaler(value: Any, *, where: str) -> str:
    known = [kind.value for kind in AutoscalerKind]
    if value not in known:
        raise ConfigError(f"{where} {value!r} is not an autoscaler; known: {', '.join(known)}")
    return str(value)


def _timer(target: Any, values: list[Any], where: str) -> Axis:
    if not isinstance(target, str) or target not in BY_KEY:
        close = difflib.get_close_matches(str(target), list(BY_KEY), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(f"{where}.timer {target!r} is not a timer of the catalogue "
                          f"(simkube.core.timers){hint}",
                          hint="docs/simulated-time.md lists them: clusterAutoscaler.NAME, "
                               "karpenter.NAME, scheduler.NAME, controllerManager.NAME, "
                               "metricsServer.NAME")
    checked = []
    for index, value in enumerate(values):
        text = duration_text(value)
        try:
            timer_settings(timer_spec({target: text}))
        except TimerSpecError as exc:
            raise ConfigError(f"{where}.values[{index}]: {exc.message}") from None
        checked.append(text)
    return Axis(kind=AxisKind.TIMER, target=target, values=tuple(checked))


def duration_text(value: Any) -> str:
    """A trace-time value as the spec takes it: a number is seconds (``30`` → ``30s``)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:g}s"
    return str(value)


def _ca_flag(target: Any, values: list[Any], where: str) -> Axis:
    if not isinstance(target, str) or not target.startswith("--") or "=" in target:
        raise ConfigError(f"{where}.caFlag {target!r} must be a flag name such as --expander")
    if f"clusterAutoscaler.{target[2:]}" in BY_KEY:
        raise ConfigError(f"{where}.caFlag {target} is a timer sk-ctrl scales for every run",
                          hint=f"use an axis 'timer: clusterAutoscaler.{target[2:]}' (trace time)")
    texts = [str(value).lower() if isinstance(value, bool) else
             (f"{value:g}" if isinstance(value, float) else str(value)) for value in values]
    for index, text in enumerate(texts):
        try:
            ca.merge_flags((f"{target}={text}",))
        except SimkubeError as exc:  # the environment's refusal of a flag it owns
            raise ConfigError(f"{where}.values[{index}]: {exc.message}") from None
    return Axis(kind=AxisKind.CA_FLAG, target=target, values=tuple(texts))


def _node_groups(target: Any, values: list[Any], where: str) -> Axis:
    if not isinstance(target, dict) or set(target) != {"group", "field"}:
        raise ConfigError(f"{where}.nodeGroups must be {{group: ID, field: NAME}}")
    fields = [field.value for field in NodeGroupField]
    if target["field"] not in fields:
        raise ConfigError(f"{where}.nodeGroups.field {target['field']!r} is not one of "
                          f"{', '.join(fields)}")
    field = NodeGroupField(target["field"])
    checked = [_group_value(field, value, where=f"{where}.values[{index}]")
               for index, value in enumerate(values)]
    group = str(target["group"])
    return Axis(kind=AxisKind.NODE_GROUPS, target=f"{group}.{field.value}", values=tuple(checked),
                group=group, field=field)


def _group_value(field: NodeGroupField, value: Any, *, where: str) -> Value:
    if field in (NodeGroupField.MIN_SIZE, NodeGroupField.MAX_SIZE):
        if type(value) is not int or value < 0:
            raise ConfigError(f"{where} {value!r}: {field.value} must be a whole number, 0 or more")
        return value
    if field is NodeGroupField.PRICE:
        return number(value, what=f"{where} ({field.value})", positive=False)
    if field is NodeGroupField.DELAY:
        text = duration_text(value)
        parse_duration(text, field=where, allow_zero=True)
        return text
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where} {value!r}: {field.value} must be a name such as m5.large")
    return value


def _trace_edit(target: Any, values: list[Any], where: str) -> Axis:
    edits = [edit.value for edit in TraceEdit]
    if target not in edits:
        raise ConfigError(f"{where}.traceEdit {target!r} is not one of {', '.join(edits)}")
    factors = tuple(number(value, what=f"{where}.values[{index}] (a factor)")
                    for index, value in enumerate(values))
    return Axis(kind=AxisKind.TRACE_EDIT, target=str(target), values=factors)


_PARSERS = {AxisKind.TIMER: _timer, AxisKind.CA_FLAG: _ca_flag,
            AxisKind.NODE_GROUPS: _node_groups, AxisKind.TRACE_EDIT: _trace_edit}
