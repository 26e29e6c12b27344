"""Pod templates made fit for fake nodes: placement, port clean-up and KWOK's annotations.

Every pod a simulation creates, whether applied directly (a bare Pod) or made by a
controller from a template, passes through one of the templates rewritten here, so this is
the one place that decides where the simulation's pods may run and which KWOK stages act on
them. Templates are found by the JSON pointers the trace's tracked kinds declare, or by the
well-known paths of the built-in workload kinds when a trace declares none (SimKube traces
often do not).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from simkube.driver.durations import go_duration
from simkube.driver.names import SIMULATION_LABEL, STARTUP_DELAY, STARTUP_DELAY_MAX
from simkube.driver.options import Placement, PodTiming
from simkube.trace import KubeObject, TraceHeader

DEFAULT_TEMPLATE_PATHS: dict[str, tuple[str, ...]] = {
    "v1.Pod": ("",),
    "v1.ReplicationController": ("/spec/template",),
    "apps/v1.Deployment": ("/spec/template",),
    "apps/v1.ReplicaSet": ("/spec/template",),
    "apps/v1.StatefulSet": ("/spec/template",),
    "apps/v1.DaemonSet": ("/spec/template",),
    "batch/v1.Job": ("/spec/template",),
    "batch/v1.CronJob": ("/spec/jobTemplate/spec/template",),
}


def template_paths(header: TraceHeader, kind_key: str) -> tuple[str, ...]:
    tracked = header.tracked(kind_key)
    if tracked is not None and tracked.pod_template_paths:
        return tracked.pod_template_paths
    return DEFAULT_TEMPLATE_PATHS.get(kind_key, ())


def resolve_pointer(obj: KubeObject, pointer: str) -> dict[str, Any] | None:
    """The map at JSON pointer ``pointer`` (RFC 6901; "" is ``obj``), or None if absent."""
    node: Any = obj
    if pointer:
        for raw in pointer.lstrip("/").split("/"):
            token = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict):
                node = node.get(token)
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                return None
    return node if isinstance(node, dict) else None


def templates(obj: KubeObject, paths: tuple[str, ...]) -> Iterator[dict[str, Any]]:
    for path in paths:
        template = resolve_pointer(obj, path)
        if template is not None:
            yield template


def rewrite_template(template: dict[str, Any], *, simulation: str, placement: Placement,
                     timing: PodTiming, lifecycle_owner: tuple[str, str] | None) -> None:
    """Edit one pod template (or a Pod) in place. ``lifecycle_owner`` is (annotation, value)."""
    metadata = template.setdefault("metadata", {})
    metadata.setdefault("labels", {})[SIMULATION_LABEL] = simulation
    annotations = metadata.setdefault("annotations", {})
    if lifecycle_owner is not None:
        annotations[lifecycle_owner[0]] = lifecycle_owner[1]
    if timing.startup_delay_ms or timing.startup_jitter_ms:
        annotations[STARTUP_DELAY] = go_duration(timing.startup_delay_ms)
        if timing.startup_jitter_ms:
            annotations[STARTUP_DELAY_MAX] = go_duration(timing.startup_delay_ms
                                                         + timing.startup_jitter_ms)
    spec = template.get("spec")
    if not isinstance(spec, dict):
        return
    spec.pop("nodeName", None)  # a production node; the scheduler picks a fake one
    place(spec, placement)
    for key in ("containers", "initContainers"):
        for container in spec.get(key) or []:
            if isinstance(container, dict):
                dedupe_ports(container)


def place(spec: dict[str, Any], placement: Placement) -> None:
    """Merge the node selector and add missing tolerations."""
    if placement.node_selector:
        selector = spec.get("nodeSelector")
        spec["nodeSelector"] = {**(selector if isinstance(selector, dict) else {}),
                                **placement.node_selector}
    tolerations = spec.get("tolerations")
    present = list(tolerations) if isinstance(tolerations, list) else []
    for toleration in placement.tolerations:
        if dict(toleration) not in present:
            present.append(dict(toleration))
    if present:
        spec["tolerations"] = present


def dedupe_ports(container: dict[str, Any]) -> None:
    """Drop repeated (containerPort, protocol) entries: server-side apply keys the list by
    them and refuses duplicates, which older API servers accepted into production."""
    ports = container.get("ports")
    if not isinstance(ports, list):
        return
    seen: set[tuple[Any, Any]] = set()
    kept = []
    for port in ports:
        key = ((port.get("containerPort"), port.get("protocol") or "TCP")
               if isinstance(port, dict) else (id(port), None))
        if key not in seen:
            seen.add(key)
            kept.append(port)
    container["ports"] = kept
