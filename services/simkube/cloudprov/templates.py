"""Node templates: what every Node of a group looks like, from a real Node or a short form.

Users describe a group by pasting a production Node exactly as ``kubectl get node -o yaml``
prints it, because that is the most faithful description of an instance type they have. Only
what makes nodes of the group alike is kept — labels, taints, capacity, allocatable, OS,
architecture and kubelet version. What belongs to one machine or one moment (uid,
resourceVersion, timestamps, conditions, addresses, images, providerID, podCIDR, annotations,
the hostname label) is dropped, and so are the taints that controllers put on and take off
(not-ready, unreachable, pressure, cordon, the autoscaler's own). The short form names the
few facts directly for groups that have no production counterpart.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from simkube.cloudprov.fields import Section
from simkube.cloudprov.naming import GROUP_LABEL, KWOK_ANNOTATION, OWNER_LABEL, TaintEffect
from simkube.cloudprov.naming import WellKnownLabel as L
from simkube.core.version import UPSTREAM

QUANTITY = re.compile(r"^(\d+(\.\d*)?|\.\d+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?\d+)?$")
REQUIRED_RESOURCES = ("cpu", "memory", "pods")
TRANSIENT_TAINTS = frozenset({
    "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable",
    "node.kubernetes.io/unschedulable", "node.kubernetes.io/memory-pressure",
    "node.kubernetes.io/disk-pressure", "node.kubernetes.io/pid-pressure",
    "node.kubernetes.io/network-unavailable", "node.kubernetes.io/out-of-service",
    "node.cloudprovider.kubernetes.io/uninitialized", "node.cloudprovider.kubernetes.io/shutdown",
    "ToBeDeletedByClusterAutoscaler", "DeletionCandidateOfClusterAutoscaler",
    KWOK_ANNOTATION,  # every fake node gets KWOK's taint anyway
})
# Labels that name one machine or its owner here, set per Node rather than per template.
PER_NODE_LABELS = frozenset({L.HOSTNAME, GROUP_LABEL, OWNER_LABEL})
# GA label <- deprecated beta label that older clusters still print.
BETA_FALLBACKS = ((L.OS, L.BETA_OS), (L.ARCH, L.BETA_ARCH),
                  (L.INSTANCE_TYPE, L.BETA_INSTANCE_TYPE), (L.ZONE, L.BETA_ZONE))


@dataclass(frozen=True, kw_only=True)
class Taint:
    key: str
    value: str
    effect: TaintEffect

    def manifest(self) -> dict[str, str]:
        taint = {"key": self.key, "effect": str(self.effect)}
        if self.value:
            taint["value"] = self.value
        return taint


@dataclass(frozen=True, kw_only=True)
class NodeTemplate:
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    capacity: Mapping[str, str]
    allocatable: Mapping[str, str]
    kubelet_version: str

    @property
    def summary(self) -> str:
        cap = self.capacity
        return (f"{self.labels.get(L.INSTANCE_TYPE)} in {self.labels.get(L.ZONE)}: "
                f"{cap['cpu']} cpu, {cap['memory']} memory, {cap['pods']} pods")


def from_node(data: Any, *, owner: str, field: str) -> NodeTemplate:
    """A template from a real Node manifest, sanitised; errors name ``owner`` and ``field``."""
    node = Section(data, owner=owner, field=field)
    if node.has("kind") and node.data["kind"] != "Node":
        raise node.error("kind", f"must be Node, not {node.data['kind']!r}")
    metadata = node.section("metadata") if node.has("metadata") else Section({}, owner=owner)
    spec = node.section("spec") if node.has("spec") else Section({}, owner=owner)
    status = node.section("status")
    info = status.section("nodeInfo") if status.has("nodeInfo") else Section({}, owner=owner)
    labels = {k: v for k, v in metadata.string_map("labels").items() if k not in PER_NODE_LABELS}
    for ga, beta in BETA_FALLBACKS:
        if ga not in labels and beta in labels:
            labels[ga] = labels[beta]
    labels.setdefault(L.OS, info.data.get("operatingSystem") or "linux")
    labels.setdefault(L.ARCH, info.data.get("architecture") or "amd64")
    for required in (L.INSTANCE_TYPE, L.ZONE):
        if required not in labels:
            raise metadata.error("labels", f"lacks {required} (nor its beta form); Cluster "
                                 "Autoscaler needs it to tell node groups apart")
    capacity = _resources(status, "capacity")
    allocatable = _resources(status, "allocatable") if status.has("allocatable") else capacity
    for name in REQUIRED_RESOURCES:
        if name not in allocatable:
            raise status.error("allocatable", f"lacks {name!r}")
    taints = tuple(t for t in _taints(spec, "taints") if t.key not in TRANSIENT_TAINTS)
    version = info.data.get("kubeletVersion")
    return NodeTemplate(labels=_plain(labels), taints=taints, capacity=capacity,
                        allocatable=allocatable,
                        kubelet_version=str(version) if version else UPSTREAM.kubernetes)


SHAPE_KEYS = ("cpu", "memory", "pods", "ephemeralStorage", "instanceType", "zone", "os", "arch",
              "labels", "taints", "gpu")


def from_shape(data: Any, *, owner: str, field: str, gpu_label: str,
               gpu_resource: str) -> NodeTemplate:
    """A template from the short form: cpu, memory, pods, instanceType, zone, labels, taints."""
    shape = Section(data, owner=owner, field=field)
    shape.check_keys(SHAPE_KEYS)
    capacity = {"cpu": _quantity(shape, "cpu"), "memory": _quantity(shape, "memory"),
                "pods": _quantity(shape, "pods", default="110"),
                "ephemeral-storage": _quantity(shape, "ephemeralStorage", default="100Gi")}
    labels = shape.string_map("labels")
    for key in labels:
        if key in PER_NODE_LABELS:
            raise shape.error(f"labels.{key}", "is set per node by sk-cloudprov")
    labels.update({L.INSTANCE_TYPE: shape.string("instanceType"), L.ZONE: shape.string("zone"),
                   L.OS: shape.string("os", default="linux"),
                   L.ARCH: shape.string("arch", default="amd64")})
    if shape.has("gpu"):
        gpu = shape.section("gpu")
        gpu.check_keys(("type", "count"))
        labels[gpu_label] = gpu.string("type")
        capacity[gpu_resource] = str(gpu.integer("count", default=1, low=1))
    return NodeTemplate(labels=_plain(labels), taints=tuple(_taints(shape, "taints")),
                        capacity=capacity, allocatable=dict(capacity),
                        kubelet_version=UPSTREAM.kubernetes)


def _plain(labels: dict[str, str]) -> dict[str, str]:
    return {str(key): value for key, value in sorted(labels.items())}


def _quantity(section: Section, key: str, *, default: str | None = None) -> str:
    value = section.get(key, (str, int, float), what="a quantity like 4, 500m or 16Gi",
                        **({} if default is None else {"default": default}))
    text = str(value).strip()
    if not QUANTITY.match(text):
        raise section.error(key, f"{text!r} is not a quantity like 4, 500m or 16Gi")
    return text


def _resources(section: Section, key: str) -> dict[str, str]:
    raw = section.section(key)
    return {str(name): _quantity(raw, str(name)) for name in raw.data}


def _taints(section: Section, key: str) -> list[Taint]:
    taints = []
    effects = ", ".join(TaintEffect)
    for index, raw in enumerate(section.items(key)):
        at = f"{key}[{index}]"
        item = raw
        if isinstance(raw, str):  # the kubectl form key[=value]:Effect
            head, _, effect = raw.rpartition(":")
            name, _, value = head.partition("=")
            item = {"key": name, "value": value, "effect": effect}
        taint = Section(item, owner=section.owner,
                        field=f"{section.field}.{at}" if section.field else at)
        effect = taint.string("effect")
        if effect not in {e.value for e in TaintEffect}:
            raise taint.error("effect", f"{effect!r} is not one of {effects}")
        taints.append(Taint(key=taint.string("key"), value=str(taint.data.get("value") or ""),
                            effect=TaintEffect(effect)))
    return taints
