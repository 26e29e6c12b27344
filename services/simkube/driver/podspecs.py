"""Pod templates made fit for fake nodes: placement, port clean-up and KWOK's annotations.

Every pod a simulation creates, whether applied directly (a bare Pod) or made by a
controller from a template, passes through one of the templates rewritten here, so this is
the one place that decides where the simulation's pods may run and which KWOK stages act on
them. Finding the templates (the trace's pod-template paths, or the built-in kinds' when a
trace declares none, as SimKube traces often do not) is the trace package's ``pod_specs``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from simkube.core.durations import go_duration
from simkube.driver.names import SIMULATION_LABEL, STARTUP_DELAY, STARTUP_DELAY_MAX
from simkube.driver.options import Placement, PodTiming
from simkube.trace import KubeObject
from simkube.trace.pod_edits import dedupe_ports
from simkube.trace.pod_specs import containers, resolve_pointer


def child_map(parent: dict[str, Any], key: str) -> dict[str, Any]:
    """``parent[key]``, created when absent or null (JSON traces write empty maps as null).

    Anything else that is not a map raises ``TypeError``: the object is malformed, and the
    applier reports it rather than guessing."""
    value = parent.get(key)
    if value is None:
        value = parent[key] = {}
    if not isinstance(value, dict):
        raise TypeError(f"{key} must be a map, not {type(value).__name__}")
    return value


def templates(obj: KubeObject, paths: tuple[str, ...]) -> Iterator[dict[str, Any]]:
    for path in paths:
        template = resolve_pointer(obj, path)
        if isinstance(template, dict):
            yield template


def rewrite_template(template: dict[str, Any], *, simulation: str, placement: Placement,
                     timing: PodTiming, lifecycle_owner: tuple[str, str] | None) -> None:
    """Edit one pod template (or a Pod) in place. ``lifecycle_owner`` is (annotation, value)."""
    metadata = child_map(template, "metadata")
    child_map(metadata, "labels")[SIMULATION_LABEL] = simulation
    annotations = child_map(metadata, "annotations")
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
    for _, _, container in containers(spec):
        dedupe_ports(container)  # server-side apply refuses repeated (port, protocol) keys


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
