"""Finding the pod specs inside workload objects, through the tracker's pod-template paths.

The driver and the validator both need every pod spec an object carries: a Deployment's
``/spec/template``, a CronJob's ``/spec/jobTemplate/spec/template``, a bare Pod itself
(path ``""``). Paths are JSON pointers (RFC 6901) as SimKube's tracker configuration spells
them; built-in kinds fall back to their well-known path when the trace does not say.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from simkube.trace.model import KubeObject, TraceHeader

DEFAULT_TEMPLATE_PATHS: dict[str, str] = {
    "v1.Pod": "",
    "v1.ReplicationController": "/spec/template",
    "apps/v1.Deployment": "/spec/template",
    "apps/v1.ReplicaSet": "/spec/template",
    "apps/v1.StatefulSet": "/spec/template",
    "apps/v1.DaemonSet": "/spec/template",
    "batch/v1.Job": "/spec/template",
    "batch/v1.CronJob": "/spec/jobTemplate/spec/template",
}
CONTAINER_LISTS = ("initContainers", "containers")


@dataclass(frozen=True, slots=True)
class PodSpecSite:
    """One pod spec inside an object: ``path`` is its dotted field path for messages."""

    path: str
    spec: dict[str, Any]


def resolve_pointer(document: Any, pointer: str) -> Any:
    """The value at a JSON pointer, or ``None`` where the path does not exist."""
    if pointer == "":
        return document
    if not pointer.startswith("/"):
        return None
    current = document
    for token in pointer[1:].split("/"):
        key = token.replace("~1", "/").replace("~0", "~")
        if isinstance(current, dict):
            current = current.get(key)
        elif isinstance(current, list) and key.isdigit() and int(key) < len(current):
            current = current[int(key)]
        else:
            return None
    return current


def dotted(pointer: str) -> str:
    """``/spec/template`` → ``spec.template`` (how findings name fields)."""
    return ".".join(part.replace("~1", "/").replace("~0", "~")
                    for part in pointer.split("/")[1:])


def template_paths(header: TraceHeader, kind_key: str) -> tuple[str, ...]:
    """The pod-template paths of a kind: the tracker's, else the built-in default, else none."""
    tracked = header.tracked(kind_key)
    if tracked is not None and tracked.pod_template_paths:
        return tracked.pod_template_paths
    default = DEFAULT_TEMPLATE_PATHS.get(kind_key)
    return () if default is None else (default,)


def pod_specs(obj: KubeObject, paths: tuple[str, ...]) -> Iterator[PodSpecSite]:
    """Every pod spec found at ``paths`` (templates whose ``spec`` is a map)."""
    for pointer in paths:
        template = resolve_pointer(obj, pointer)
        if isinstance(template, dict) and isinstance(template.get("spec"), dict):
            prefix = dotted(pointer)
            yield PodSpecSite(f"{prefix}.spec" if prefix else "spec", template["spec"])


def containers(spec: dict[str, Any]) -> Iterator[tuple[str, int, dict[str, Any]]]:
    """``(list name, index, container)`` for init and regular containers."""
    for key in CONTAINER_LISTS:
        items = spec.get(key)
        if isinstance(items, list):
            for index, container in enumerate(items):
                if isinstance(container, dict):
                    yield key, index, container
