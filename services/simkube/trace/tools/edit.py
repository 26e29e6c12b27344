"""``skctl trace edit``: apply what-if steps, in order, to a trace flowing through.

Object steps (select, replicas, resources, scheduling, an HPA's target and bounds) rewrite
each applied object where it passes; time steps (window, time stretch) rewrite timestamps,
pod lifecycles and recorded usage; load steps scale or drop recorded usage. Each step
wraps the stream of the one before, so an edit of any size runs in constant memory (except
a window's folded initial state, which is one object per live object at its start).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

from simkube.core.quantities import scale_quantity
from simkube.trace.model.fields import At, map_items
from simkube.trace.model.objects import labels_of
from simkube.trace.model.pod_specs import PodSpecSite, containers, pod_specs, template_paths
from simkube.trace.model.selectors import Match
from simkube.trace.model.source import TraceSource
from simkube.trace.model.types import KubeObject, ObjectRef, TraceEvent, TraceHeader
from simkube.trace.tools import edit_steps
from simkube.trace.tools.edit_autoscaling import change_hpa, drop_usage, scale_load
from simkube.trace.tools.edit_time import stretch_time, window
from simkube.trace.tools.stream import TraceStream, stream_of, visit_objects


def apply_edits(source: TraceSource, steps: Sequence[edit_steps.EditStep]) -> TraceStream:
    """The source with every step applied in order, as a stream to write."""
    stream = stream_of(source)
    for step in steps:
        if isinstance(step, edit_steps.TimeWindow):
            stream = window(step, stream)
        elif isinstance(step, edit_steps.TimeStretch):
            stream = stretch_time(step.factor, stream)
        elif isinstance(step, edit_steps.Select):
            stream = _select(step, stream)
        elif isinstance(step, edit_steps.HpaChange):
            stream = change_hpa(step, stream)
        elif isinstance(step, edit_steps.ScaleLoad):
            stream = scale_load(step, stream)
        elif isinstance(step, edit_steps.DropUsage):
            stream = drop_usage(step, stream)
        else:
            stream = visit_objects(stream, _object_edit(step, stream.header))
    return stream


def _select(step: edit_steps.Select, stream: TraceStream) -> TraceStream:
    owners: dict[tuple[str, str], bool] = {}  # (kind key, ns/name) → kept

    def wanted(obj: KubeObject) -> bool:
        ref = ObjectRef.of(obj)
        kept = step.match.matches(ref, labels_of(obj)) == step.keep
        owners[(ref.kind_key, ref.ns_name)] = kept or owners.get((ref.kind_key, ref.ns_name),
                                                                 False)
        return kept

    def events() -> Iterator[TraceEvent]:
        for event in stream.events:
            if not len(event):
                yield event  # already empty: keep, it marks time
                continue
            event.applied = [obj for obj in event.applied if wanted(obj)]
            event.deleted = [obj for obj in event.deleted if wanted(obj)]
            if event.applied or event.deleted:
                yield event

    def owner_wanted(owner_kind: str, owner: str) -> bool:
        known = owners.get((owner_kind, owner))
        if known is not None:
            return known
        # An owner the trace never shows: judge by what its lifecycle or usage says about it.
        api_version, _, kind = owner_kind.rpartition(".")
        namespace, _, name = owner.rpartition("/")
        ref = ObjectRef(api_version=api_version, kind=kind, namespace=namespace, name=name)
        return step.match.matches(ref, {}) == step.keep

    return replace(stream, initial_state=(obj for obj in stream.initial_state if wanted(obj)),
                   events=events(),
                   lifecycles=lambda: [lc for lc in stream.lifecycles()
                                       if owner_wanted(lc.owner_kind, lc.owner)],
                   usage=lambda: tuple(series for series in stream.usage()
                                       if owner_wanted(series.kind, series.workload)))


def _object_edit(step: edit_steps.EditStep, header: TraceHeader) -> Callable[[KubeObject], None]:
    match: Match = getattr(step, "match", Match())

    def edit(obj: KubeObject) -> None:
        ref = ObjectRef.of(obj)
        if not match.matches(ref, labels_of(obj)):
            return
        if isinstance(step, edit_steps.ScaleReplicas):
            _scale_replicas(step, obj)
            return
        for site in pod_specs(obj, template_paths(header, ref.kind_key)):
            if isinstance(step, edit_steps.ScaleResources):
                _scale_resources(step, site)
            elif isinstance(step, edit_steps.NodeSelector):
                _node_selector(step, site)
            elif isinstance(step, edit_steps.Tolerations):
                _tolerations(step, site)

    return edit


def _scale_replicas(step: edit_steps.ScaleReplicas, obj: KubeObject) -> None:
    at = At(str(ObjectRef.of(obj)))
    spec = (at / "spec").map(obj.get("spec"))
    replicas = None if spec is None else (at / "spec" / "replicas").integer(spec.get("replicas"))
    if spec is None or replicas is None:  # a kind without replicas
        return
    if step.value is not None:
        spec["replicas"] = step.value
    elif step.factor is not None:
        spec["replicas"] = max(0, int(replicas * step.factor + 0.5))


def _scale_resources(step: edit_steps.ScaleResources, site: PodSpecSite) -> None:
    sections = [name for name, wanted in (("requests", step.requests), ("limits", step.limits))
                if wanted]
    for key, index, container in containers(site.spec, site.at):
        at = site.at / key / index / "resources"
        resources = at.map(container.get("resources")) or {}
        for section in sections:  # RESOURCE_SECTIONS chosen by the step
            amounts = (at / section).map(resources.get(section)) or {}
            for resource, factor in (("cpu", step.cpu), ("memory", step.memory)):
                if factor != 1.0 and amounts.get(resource) is not None:
                    amounts[resource] = _scaled(amounts[resource], factor, resource=resource,
                                                at=at / section / resource)


def _scaled(value: Any, factor: float, *, resource: str, at: At) -> str:
    at.quantity(value)  # names the field when the value is not a quantity
    try:
        return scale_quantity(value, factor, resource=resource)
    except ArithmeticError:  # a quantity too large to scale
        raise at.wrong(value, "a resource quantity within range") from None


def _node_selector(step: edit_steps.NodeSelector, site: PodSpecSite) -> None:
    spec = site.spec
    selector = dict((site.at / "nodeSelector").strings(spec.get("nodeSelector")) or {})
    for key in step.remove:
        selector.pop(key, None)
    selector.update(step.add)
    if selector:
        spec["nodeSelector"] = selector
    else:
        spec.pop("nodeSelector", None)


def _tolerations(step: edit_steps.Tolerations, site: PodSpecSite) -> None:
    spec = site.spec
    tolerations = [entry for at, entry in map_items(spec, "tolerations", site.at)
                   if (at / "key").string(entry.get("key")) not in step.remove]
    for items in step.add:
        toleration = dict(items)
        if toleration not in tolerations:
            tolerations.append(toleration)
    if tolerations:
        spec["tolerations"] = tolerations
    else:
        spec.pop("tolerations", None)
