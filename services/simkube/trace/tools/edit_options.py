"""``skctl trace edit`` flags turned into steps, in one fixed, documented order.

Flags cannot express order, so they apply as: window, keep filters, drop filters, replicas,
resources, node selector, tolerations, HPA change, load factor, drop usage, time stretch (a
``--steps`` file comes first and can use any order). Keep flags narrow (each must match);
drop flags each remove what they match.
"""

from __future__ import annotations

from dataclasses import dataclass

from simkube.core.errors import ConfigError
from simkube.trace.model.selectors import Match, parse_selector
from simkube.trace.tools import edit_steps
from simkube.trace.tools.edit_steps import (
    hpa_name,
    parse_duration,
    parse_time_point,
    toleration,
)


@dataclass(frozen=True, kw_only=True)
class EditOptions:
    start: str | None = None
    end: str | None = None
    duration: str | None = None
    namespaces: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    selector: str | None = None
    drop_namespaces: tuple[str, ...] = ()
    drop_kinds: tuple[str, ...] = ()
    drop_selector: str | None = None
    replicas_factor: float | None = None
    replicas: int | None = None
    cpu_factor: float | None = None
    memory_factor: float | None = None
    resources_in: str = "both"
    add_node_selector: tuple[str, ...] = ()
    remove_node_selector: tuple[str, ...] = ()
    add_toleration: tuple[str, ...] = ()
    remove_toleration: tuple[str, ...] = ()
    time_stretch: float | None = None
    hpa: str | None = None  # namespace/name of the HPA the three --hpa-* flags change
    hpa_cpu_target: int | None = None
    hpa_min_replicas: int | None = None
    hpa_max_replicas: int | None = None
    load_factor: float | None = None
    drop_usage: bool = False
    target_namespaces: tuple[str, ...] = ()  # restrict replicas, resources, scheduling steps
    target_kinds: tuple[str, ...] = ()
    target_selector: str | None = None


def steps_from_options(options: EditOptions) -> list[edit_steps.EditStep]:
    o = options
    target = Match(namespaces=frozenset(o.target_namespaces), kinds=frozenset(o.target_kinds),
                   selector=parse_selector(o.target_selector) if o.target_selector else None)
    steps: list[edit_steps.EditStep] = []
    if o.start or o.end or o.duration:
        if o.end and o.duration:
            raise ConfigError("give --end or --duration, not both")
        steps.append(edit_steps.TimeWindow(
            start=parse_time_point(o.start, what="--start") if o.start else None,
            end=parse_time_point(o.end, what="--end") if o.end else None,
            duration_ms=parse_duration(o.duration, what="--duration") if o.duration else None))
    steps.extend(_filters(o))
    if o.replicas_factor is not None and o.replicas is not None:
        raise ConfigError("give --replicas-factor or --replicas, not both")
    if o.replicas_factor is not None or o.replicas is not None:
        steps.append(edit_steps.ScaleReplicas(factor=o.replicas_factor, value=o.replicas,
                                              match=target))
    if o.cpu_factor is not None or o.memory_factor is not None:
        steps.append(edit_steps.ScaleResources(
            cpu=o.cpu_factor or 1.0, memory=o.memory_factor or 1.0,
            requests=o.resources_in in ("requests", "both"),
            limits=o.resources_in in ("limits", "both"), match=target))
    if o.add_node_selector or o.remove_node_selector:
        steps.append(edit_steps.NodeSelector(
            add=tuple(_label(text) for text in o.add_node_selector),
            remove=frozenset(o.remove_node_selector), match=target))
    if o.add_toleration or o.remove_toleration:
        steps.append(edit_steps.Tolerations(
            add=tuple(toleration(text, what="--add-toleration") for text in o.add_toleration),
            remove=frozenset(o.remove_toleration), match=target))
    steps.extend(_autoscaling(o, target))
    if o.time_stretch is not None:
        steps.append(edit_steps.TimeStretch(factor=o.time_stretch))
    return steps


def _autoscaling(o: EditOptions, target: Match) -> list[edit_steps.EditStep]:
    steps: list[edit_steps.EditStep] = []
    changes = (o.hpa_cpu_target, o.hpa_min_replicas, o.hpa_max_replicas)
    if o.hpa is None and changes != (None, None, None):
        raise ConfigError("--hpa-cpu-target, --hpa-min-replicas and --hpa-max-replicas need "
                          "--hpa NAMESPACE/NAME")
    if o.hpa is not None:
        namespace, name = hpa_name(o.hpa, what="--hpa")
        steps.append(edit_steps.HpaChange(namespace=namespace, name=name,
                                          cpu_utilization=o.hpa_cpu_target,
                                          min_replicas=o.hpa_min_replicas,
                                          max_replicas=o.hpa_max_replicas))
    if o.load_factor is not None:
        steps.append(edit_steps.ScaleLoad(factor=o.load_factor, match=target))
    if o.drop_usage:
        steps.append(edit_steps.DropUsage(match=target))
    return steps


def _filters(o: EditOptions) -> list[edit_steps.EditStep]:
    filters: list[edit_steps.EditStep] = []
    for keep, namespaces, kinds, selector in ((True, o.namespaces, o.kinds, o.selector),
                                              (False, o.drop_namespaces, o.drop_kinds,
                                               o.drop_selector)):
        matches = ([Match(namespaces=frozenset(namespaces))] if namespaces else []) + (
            [Match(kinds=frozenset(kinds))] if kinds else []) + (
            [Match(selector=parse_selector(selector))] if selector else [])
        filters += [edit_steps.Select(keep=keep, match=match) for match in matches]
    return filters


def _label(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not key or not sep:
        raise ConfigError(f"--add-node-selector {text!r} must be key=value")
    return key, value
