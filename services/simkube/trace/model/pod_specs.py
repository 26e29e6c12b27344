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

from simkube.trace.model.fields import (
    At,
    field_optional_map,
    field_quantities,
    field_strings,
    map_items,
)
from simkube.trace.model.types import KubeObject, ObjectRef, TraceHeader

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
RESOURCE_SECTIONS = ("requests", "limits")


@dataclass(frozen=True, slots=True)
class PodSpecSite:
    """One pod spec inside an object: ``path`` is its dotted field path for messages,
    ``owner`` the object as errors and findings name it."""

    path: str
    spec: dict[str, Any]
    owner: str = ""
    place: At | None = None  # the same place as ``owner`` and ``path``, when already known

    @property
    def at(self) -> At:
        return self.place if self.place is not None else At(self.owner, self.path)


def resolve_pointer(document: Any, pointer: str, at: At | None = None) -> Any:
    """The value at a JSON pointer, or ``None`` where the path does not exist.

    With ``at`` (the document's place), a step through a value that is neither a map nor a
    list raises ``FieldTypeError`` instead: a template path through a string is a broken
    object, not an absent template."""
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
        elif current is None or at is None:
            return None
        else:
            raise at.wrong(current, "a map")
        if at is not None:
            at = at / key
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


def pod_templates(obj: KubeObject, paths: tuple[str, ...], *, owner: str | None = None,
                  ) -> Iterator[tuple[At, dict[str, Any]]]:
    """Every pod template (a map) at ``paths``, with its place; a non-map raises.
    ``owner``: the object's name as ``str(ObjectRef.of(obj))`` gives it, if known."""
    root = At(str(ObjectRef.of(obj)) if owner is None else owner)
    for pointer in paths:
        at = root
        for part in dotted(pointer).split(".") if pointer else ():
            at = at / part
        template = at.map(resolve_pointer(obj, pointer, root))
        if template is not None:
            yield at, template


def pod_specs(obj: KubeObject, paths: tuple[str, ...], *, owner: str | None = None,
              ) -> Iterator[PodSpecSite]:
    """Every pod spec found at ``paths``; a template or spec of the wrong type raises
    ``FieldTypeError`` naming the object and the field."""
    for at, template in pod_templates(obj, paths, owner=owner):
        place = at / "spec"
        spec = place.map(template.get("spec"))
        if spec is not None:
            yield PodSpecSite(place.path, spec, at.owner, place)


def containers(spec: dict[str, Any], at: At | None = None,
               ) -> Iterator[tuple[str, int, dict[str, Any]]]:
    """``(list name, index, container)`` for init and regular containers; a list or an entry
    of the wrong type raises (``at``: the spec's place, for the message)."""
    place = At("", "spec") if at is None else at
    for key in CONTAINER_LISTS:
        for index, (_, container) in enumerate(map_items(spec, key, place)):
            yield key, index, container


def check_placement(site: PodSpecSite) -> None:
    """Read a pod spec's placement (node selector, tolerations) as ``edit`` and the driver
    do; a wrong type raises."""
    field_strings(site.spec, "nodeSelector", site.at)
    map_items(site.spec, "tolerations", site.at)


def check_resources(container: dict[str, Any], at: At) -> None:
    """Read a container's requests and limits as ``edit`` does; a wrong type raises."""
    resources = field_optional_map(container, "resources", at)
    if resources:
        for section in RESOURCE_SECTIONS:
            field_quantities(resources, section, at / "resources")
