"""The pod-autoscaling what-ifs of ``skctl trace edit``: an HPA's target and bounds, the load.

"What if the HPA aimed at 80 % instead of 50 %?" and "what if twice the traffic came?" are
the questions an HPA replay answers. The first rewrites every recorded version of one
HorizontalPodAutoscaler; the second multiplies a workload's recorded usage, which the replay
feeds to metrics-server, so the real HPA sees twice the load and decides for itself. An HPA
step that names no HPA, or an HPA without a CPU utilization metric, is an error: silently
editing nothing would answer a different question than the one asked.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any

from simkube.core.errors import ConfigError
from simkube.trace.model.fields import At
from simkube.trace.model.objects import labels_of
from simkube.trace.model.types import KubeObject, ObjectRef, TraceEvent
from simkube.trace.model.usage import WorkloadUsage
from simkube.trace.tools.edit_steps import DropUsage, HpaChange, ScaleLoad
from simkube.trace.tools.stream import TraceStream, visit_objects

HPA_KIND = "HorizontalPodAutoscaler"


class _HpaEdit:
    """Edits the named HPA wherever it passes; after the events, says if it never did."""

    def __init__(self, step: HpaChange) -> None:
        self.step = step
        self.edited = 0
        self.others: set[str] = set()  # kinds of other objects with the HPA's name

    def objects(self, objects: Iterable[KubeObject]) -> Iterator[KubeObject]:
        for obj in objects:
            self.edit(obj)
            yield obj

    def events(self, events: Iterable[TraceEvent]) -> Iterator[TraceEvent]:
        for event in events:
            for obj in event.applied:
                self.edit(obj)
            yield event
        if not self.edited:
            label = f"{self.step.namespace}/{self.step.name}"
            if self.others:
                raise ConfigError(f"{label} is a {', '.join(sorted(self.others))}, not a "
                                  f"{HPA_KIND}; --hpa names an HPA")
            raise ConfigError(f"the trace has no {HPA_KIND} {label}",
                              hint="`skctl trace info` lists the kinds a trace applies")

    def edit(self, obj: KubeObject) -> None:
        ref = ObjectRef.of(obj)
        if (ref.namespace, ref.name) != (self.step.namespace, self.step.name):
            return
        if ref.kind != HPA_KIND or not ref.api_version.startswith("autoscaling/"):
            self.others.add(ref.kind_key)
            return
        at = At(str(ref))
        spec = (at / "spec").map(obj.get("spec"))
        if spec is None:
            spec = obj["spec"] = {}
        step = self.step
        if step.cpu_utilization is not None:
            _set_cpu_target(spec, ref, at / "spec", step.cpu_utilization)
        if step.min_replicas is not None:
            spec["minReplicas"] = step.min_replicas
        if step.max_replicas is not None:
            spec["maxReplicas"] = step.max_replicas
        low = (at / "spec" / "minReplicas").integer(spec.get("minReplicas"))
        high = (at / "spec" / "maxReplicas").integer(spec.get("maxReplicas"))
        if high is not None and (1 if low is None else low) > high:
            raise ConfigError(f"{ref}: minReplicas {low or 1} would exceed maxReplicas {high}",
                              hint="change both bounds in the same step")
        self.edited += 1


def _set_cpu_target(spec: dict[str, Any], ref: ObjectRef, at: At, percent: int) -> None:
    if ref.api_version == "autoscaling/v1":  # one CPU target, 80 % when unset
        spec["targetCPUUtilizationPercentage"] = percent
        return
    found = False
    for index, metric in enumerate((at / "metrics").list(spec.get("metrics")) or []):
        where = at / "metrics" / index
        source_key = {"Resource": "resource", "ContainerResource": "containerResource"}.get(
            (where / "type").string((where.map(metric) or {}).get("type")) or "")
        if source_key is None:
            continue
        source = (where / source_key).map(metric.get(source_key)) or {}
        target = (where / source_key / "target").map(source.get("target")) or {}
        if source.get("name") == "cpu" and target.get("type") == "Utilization":
            target["averageUtilization"] = percent
            found = True
    if not found:
        raise ConfigError(f"{ref} has no CPU utilization metric to retarget",
                          hint="only Resource (or ContainerResource) cpu metrics with a "
                          "Utilization target can be changed")


def change_hpa(step: HpaChange, stream: TraceStream) -> TraceStream:
    edit = _HpaEdit(step)
    return replace(stream, initial_state=edit.objects(stream.initial_state),
                   events=edit.events(stream.events))


def _workload_labels(stream: TraceStream) -> tuple[TraceStream, dict[tuple[str, str],
                                                                      dict[str, str]]]:
    """The stream, noting the labels of every object as it passes (the last version's)."""
    labels: dict[tuple[str, str], dict[str, str]] = {}

    def note(obj: KubeObject) -> None:
        ref = ObjectRef.of(obj)
        labels[(ref.kind_key, ref.ns_name)] = labels_of(obj)

    return visit_objects(stream, note), labels


def _matches(step: ScaleLoad | DropUsage, usage: WorkloadUsage,
             labels: dict[tuple[str, str], dict[str, str]]) -> bool:
    api_version, _, kind = usage.kind.rpartition(".")
    ref = ObjectRef(api_version=api_version, kind=kind, namespace=usage.namespace,
                    name=usage.name)
    return step.match.matches(ref, labels.get((usage.kind, usage.workload), {}))


def scale_load(step: ScaleLoad, stream: TraceStream) -> TraceStream:
    """Usage samples of matching workloads times ``step.factor`` (pod counts as recorded)."""
    noted, labels = _workload_labels(stream)

    def usage() -> tuple[WorkloadUsage, ...]:
        return tuple(replace(series, samples=tuple(s.scaled(step.factor)
                                                   for s in series.samples))
                     if _matches(step, series, labels) else series
                     for series in stream.usage())

    return replace(noted, usage=usage)


def drop_usage(step: DropUsage, stream: TraceStream) -> TraceStream:
    noted, labels = _workload_labels(stream)
    return replace(noted, usage=lambda: tuple(series for series in stream.usage()
                                              if not _matches(step, series, labels)))
