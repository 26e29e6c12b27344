"""Pod templates made fit for fake nodes: placement, port clean-up and KWOK's annotations.

In a held run the templates also carry Cluster Autoscaler's scale-up gate, which sk-ctrl
lifts pod by pod at production's plan moments (``ctrl/scale_up_gate.py``).

Every pod a simulation creates, whether applied directly (a bare Pod) or made by a
controller from a template, passes through one of the templates rewritten here, so this is
the one place that decides where the simulation's pods may run and which KWOK stages act on
them. Finding the templates (the trace's pod-template paths, or the built-in kinds' when a
trace declares none, as SimKube traces often do not) is the trace package's ``pod_specs``.
"""

from __future__ import annotations

from typing import Any

from simkube.core.durations import go_duration
from simkube.core.replay_flags import GATED_DELAY, SCALE_UP_DELAY_ANNOTATION
from simkube.driver.names import SIMULATION_LABEL, STARTUP_DELAY, STARTUP_DELAY_MAX
from simkube.driver.options import Placement, PodTiming
from simkube.trace import At, containers, dedupe_ports, field_list, field_map


def rewrite_template(template: dict[str, Any], *, at: At, simulation: str, placement: Placement,
                     timing: PodTiming, lifecycle_owner: tuple[str, str] | None) -> None:
    """Edit one pod template (or a Pod), at ``at``, in place. ``lifecycle_owner`` is
    (annotation, value). A field of the wrong type raises ``FieldTypeError``."""
    metadata = field_map(template, "metadata", at)
    field_map(metadata, "labels", at / "metadata")[SIMULATION_LABEL] = simulation
    annotations = field_map(metadata, "annotations", at / "metadata")
    if lifecycle_owner is not None:
        annotations[lifecycle_owner[0]] = lifecycle_owner[1]
    if timing.scale_up_gated:
        annotations[SCALE_UP_DELAY_ANNOTATION] = GATED_DELAY
    if timing.startup_delay_ms or timing.startup_jitter_ms:
        annotations[STARTUP_DELAY] = go_duration(timing.startup_delay_ms)
        if timing.startup_jitter_ms:
            annotations[STARTUP_DELAY_MAX] = go_duration(timing.startup_delay_ms
                                                         + timing.startup_jitter_ms)
    spec = (at / "spec").map(template.get("spec"))
    if spec is None:
        return
    spec.pop("nodeName", None)  # a production node; the scheduler picks a fake one
    place(spec, placement, at=at / "spec")
    for _, _, container in containers(spec, at / "spec"):
        dedupe_ports(container)  # server-side apply refuses repeated (port, protocol) keys


def place(spec: dict[str, Any], placement: Placement, *, at: At) -> None:
    """Merge the node selector and add missing tolerations."""
    if placement.node_selector:
        selector = (at / "nodeSelector").map(spec.get("nodeSelector")) or {}
        spec["nodeSelector"] = {**selector, **placement.node_selector}
    present = list(field_list(spec, "tolerations", at))
    for toleration in placement.tolerations:
        if dict(toleration) not in present:
            present.append(dict(toleration))
    if present:
        spec["tolerations"] = present
