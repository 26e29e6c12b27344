"""The objects a pod spec needs to exist before its pods can be created or started.

Each reference records where it sits (``location`` inside the pod spec, ``path`` for
humans), so a fix can remove or replace exactly that reference in any version of the object.
Optional references (``optional: true``) are left out: Kubernetes tolerates their absence.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from typing import Any

from simkube.trace.model.fields import field_list
from simkube.trace.model.pod_specs import PodSpecSite, containers

Location = tuple[str | int, ...]


class RefKind(Enum):
    CONFIG_MAP = ("v1", "ConfigMap", True)
    SECRET = ("v1", "Secret", True)
    SERVICE_ACCOUNT = ("v1", "ServiceAccount", True)
    PVC = ("v1", "PersistentVolumeClaim", True)
    PRIORITY_CLASS = ("scheduling.k8s.io/v1", "PriorityClass", False)
    RUNTIME_CLASS = ("node.k8s.io/v1", "RuntimeClass", False)

    def __init__(self, api_version: str, kind: str, namespaced: bool) -> None:
        self.api_version = api_version
        self.kind = kind
        self.namespaced = namespaced


class RefSite(Enum):
    ENV = "env"  # containers[i].env[j].valueFrom.<configMapKeyRef|secretKeyRef>
    ENV_FROM = "envFrom"  # containers[i].envFrom[j].<configMapRef|secretRef>
    VOLUME = "volume"  # volumes[i].<configMap|secret|persistentVolumeClaim>
    PROJECTED = "projected"  # volumes[i].projected.sources[j].<configMap|secret>
    FIELD = "field"  # serviceAccountName, priorityClassName, runtimeClassName


# Objects every namespace or cluster has without anyone creating them.
BUILT_IN: dict[RefKind, frozenset[str]] = {
    RefKind.SERVICE_ACCOUNT: frozenset({"default"}),
    RefKind.CONFIG_MAP: frozenset({"kube-root-ca.crt"}),
    RefKind.PRIORITY_CLASS: frozenset({"system-cluster-critical", "system-node-critical"}),
}


@dataclass(frozen=True, slots=True)
class PodReference:
    kind: RefKind
    name: str
    site: RefSite
    location: Location  # inside the pod spec: the entry a fix removes or replaces
    path: str  # dotted field path from the object's root, for messages


_KEY_REFS = {"configMapKeyRef": RefKind.CONFIG_MAP, "secretKeyRef": RefKind.SECRET}
_FROM_REFS = {"configMapRef": RefKind.CONFIG_MAP, "secretRef": RefKind.SECRET}
_VOLUME_REFS = {"configMap": (RefKind.CONFIG_MAP, "name"), "secret": (RefKind.SECRET, "secretName"),
                "persistentVolumeClaim": (RefKind.PVC, "claimName")}
_PROJECTED_REFS = {"configMap": RefKind.CONFIG_MAP, "secret": RefKind.SECRET}
_FIELD_REFS = {"serviceAccountName": RefKind.SERVICE_ACCOUNT, "serviceAccount":
               RefKind.SERVICE_ACCOUNT, "priorityClassName": RefKind.PRIORITY_CLASS,
               "runtimeClassName": RefKind.RUNTIME_CLASS}


def _name(source: Any, key: str = "name") -> str | None:
    if not isinstance(source, dict) or source.get("optional") is True:
        return None
    name = source.get(key)
    return name if isinstance(name, str) and name else None


def pod_references(site: PodSpecSite) -> Iterator[PodReference]:
    """Every required reference in one pod spec."""
    yield from _container_refs(site)
    yield from _volume_refs(site)
    for field, kind in _FIELD_REFS.items():
        name = site.spec.get(field)
        if field == "serviceAccount" and name == site.spec.get("serviceAccountName"):
            continue  # the deprecated alias, saying the same thing
        if isinstance(name, str) and name:
            yield PodReference(kind, name, RefSite.FIELD, (field,), f"{site.path}.{field}")


def _container_refs(site: PodSpecSite) -> Iterator[PodReference]:
    for key, index, container in containers(site.spec, site.at):
        where = f"{site.path}.{key}[{index}]"
        at = site.at / key / index
        for env_index, env in enumerate(field_list(container, "env", at)):
            value_from = env.get("valueFrom") if isinstance(env, dict) else None
            for ref_key, kind in _KEY_REFS.items():
                name = _name(value_from.get(ref_key)) if isinstance(value_from, dict) else None
                if name:
                    yield PodReference(kind, name, RefSite.ENV, (key, index, "env", env_index),
                                       f"{where}.env[{env_index}].valueFrom.{ref_key}.name")
        for from_index, source in enumerate(field_list(container, "envFrom", at)):
            for ref_key, kind in _FROM_REFS.items():
                name = _name(source.get(ref_key)) if isinstance(source, dict) else None
                if name:
                    yield PodReference(kind, name, RefSite.ENV_FROM,
                                       (key, index, "envFrom", from_index, ref_key),
                                       f"{where}.envFrom[{from_index}].{ref_key}.name")


def _volume_refs(site: PodSpecSite) -> Iterator[PodReference]:
    for volume_index, volume in enumerate(field_list(site.spec, "volumes", site.at)):
        if not isinstance(volume, dict):
            continue
        where = f"{site.path}.volumes[{volume_index}]"
        for source_key, (kind, name_key) in _VOLUME_REFS.items():
            name = _name(volume.get(source_key), name_key)
            if name:
                yield PodReference(kind, name, RefSite.VOLUME, ("volumes", volume_index),
                                   f"{where}.{source_key}.{name_key}")
        at = site.at / "volumes" / volume_index
        projected = (at / "projected").map(volume.get("projected")) or {}
        for source_index, source in enumerate(field_list(projected, "sources",
                                                         at / "projected")):
            for source_key, kind in _PROJECTED_REFS.items():
                name = _name(source.get(source_key)) if isinstance(source, dict) else None
                if name:
                    yield PodReference(
                        kind, name, RefSite.PROJECTED, ("volumes", volume_index, source_index),
                        f"{where}.projected.sources[{source_index}].{source_key}.name")

