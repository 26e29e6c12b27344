"""The node groups sk-cloudprov serves, from a YAML file or a ConfigMap, checked in full.

Every mistake stops sk-cloudprov at start with a message naming the source, the group and
the field; a half-valid config is never served, because Cluster Autoscaler would scale what
it gets. A group's node template is a real Node (inline under ``node`` or in ``nodeFile``, a
path next to the config file or another key of the same ConfigMap) or the short ``shape``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from simkube.cloudprov.fields import DNS_LABEL, DNS_SUBDOMAIN, Section
from simkube.cloudprov.options import Overrides, parse_overrides
from simkube.cloudprov.provisioning import Provisioning, parse_provisioning
from simkube.cloudprov.templates import NodeTemplate, from_node, from_shape
from simkube.core.config import load_yaml_mapping
from simkube.core.errors import ConfigError

DEFAULT_NAMESPACE = "sk-cloudprov"
DEFAULT_INFRA_NODE = "sk-cloudprov-infra"
DEFAULT_GPU_LABEL = "simkube.dev/gpu-type"
DEFAULT_GPU_RESOURCE = "nvidia.com/gpu"
# Node names are `<id>-<ReplicaSet hash>-<5 chars>`; the API server truncates generated pod
# names past 58 characters, so a longer id would make pod and Node names disagree.
MAX_GROUP_ID = 40
MAX_GROUP_SIZE = 100_000
TOP_KEYS = ("namespace", "infraNode", "gpu", "provisioning", "nodeGroups")
GROUP_KEYS = ("id", "minSize", "maxSize", "pricePerHour", "node", "nodeFile", "shape", "options",
              "provisioning")
TEMPLATE_KEYS = ("node", "nodeFile", "shape")

DEFAULT_PROVISIONING = Provisioning()

ReadMapping = Callable[[str, str], dict[str, Any]]
"""Reads a sibling document (``nodeFile``) by reference; the second argument names it."""


@dataclass(frozen=True, kw_only=True)
class NodeGroupConfig:
    id: str
    min_size: int
    max_size: int
    price_per_hour: float
    template: NodeTemplate
    overrides: Overrides
    provisioning: Provisioning = DEFAULT_PROVISIONING


@dataclass(frozen=True, kw_only=True)
class CloudConfig:
    namespace: str
    infra_node: str
    gpu_label: str
    gpu_types: tuple[str, ...]
    groups: Mapping[str, NodeGroupConfig]


def load_file(path: Path) -> CloudConfig:
    data = load_yaml_mapping(path, what="config file")

    def read(ref: str, what: str) -> dict[str, Any]:
        target = Path(ref) if Path(ref).is_absolute() else path.parent / ref
        return load_yaml_mapping(target, what=what)
    return parse(data, source=str(path), read=read)


CONFIGMAP_KEY = "config.yaml"


def from_configmap(data: Mapping[str, str], *, namespace: str, name: str) -> CloudConfig:
    """A config from a ConfigMap's ``config.yaml``; ``nodeFile`` names another of its keys."""
    where = f"ConfigMap {namespace}/{name}"

    def read(key: str, what: str) -> dict[str, Any]:
        if key not in data:
            raise ConfigError(f"{what}: {where} has no key {key!r} "
                              f"(keys: {', '.join(sorted(data)) or 'none'})")
        return _yaml_mapping(data[key], what=f"{what} ({where} key {key})")
    return parse(read(CONFIGMAP_KEY, where), source=f"{where} key {CONFIGMAP_KEY}", read=read)


def _yaml_mapping(text: str, *, what: str) -> dict[str, Any]:
    try:
        loaded = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{what} is not valid YAML: {exc}") from None
    if not isinstance(loaded, dict):
        raise ConfigError(f"{what} must be a YAML mapping")
    return loaded


def parse(data: Mapping[str, Any], *, source: str, read: ReadMapping) -> CloudConfig:
    top = Section(data, owner=source)
    top.check_keys(TOP_KEYS)
    namespace = top.string("namespace", default=DEFAULT_NAMESPACE)
    if not DNS_LABEL.match(namespace) or len(namespace) > 63:
        raise top.error("namespace", f"{namespace!r} is not a valid namespace name")
    infra = top.string("infraNode", default=DEFAULT_INFRA_NODE)
    if not DNS_SUBDOMAIN.match(infra) or len(infra) > 253:
        raise top.error("infraNode", f"{infra!r} is not a valid node name")
    gpu = top.section("gpu") if top.has("gpu") else Section({}, owner=source, field="gpu")
    gpu.check_keys(("label", "resource", "types"))
    gpu_label = gpu.string("label", default=DEFAULT_GPU_LABEL)
    gpu_resource = gpu.string("resource", default=DEFAULT_GPU_RESOURCE)
    declared = [str(t) for t in gpu.items("types")]
    provisioning = DEFAULT_PROVISIONING
    if top.has("provisioning"):
        provisioning = parse_provisioning(top.data["provisioning"], owner=source,
                                          field="provisioning", defaults=provisioning)
    raw_groups = top.items("nodeGroups")
    if not raw_groups:
        raise top.error("nodeGroups", "must list at least one node group")
    groups: dict[str, NodeGroupConfig] = {}
    for index, raw in enumerate(raw_groups):
        group = _group(raw, index=index, source=source, read=read, gpu_label=gpu_label,
                       gpu_resource=gpu_resource, provisioning=provisioning)
        if group.id in groups:
            raise ConfigError(f"{source}: nodeGroups[{index}]: id {group.id!r} is used twice")
        gpu_type = group.template.labels.get(gpu_label)
        if gpu_type and declared and gpu_type not in declared:
            raise ConfigError(f"{source}: node group {group.id!r}: GPU type {gpu_type!r} is not "
                              f"in gpu.types ({', '.join(declared)})")
        groups[group.id] = group
    used = [g.template.labels[gpu_label] for g in groups.values() if gpu_label in g.template.labels]
    return CloudConfig(namespace=namespace, infra_node=infra, gpu_label=gpu_label,
                       gpu_types=tuple(dict.fromkeys(declared or used)), groups=groups)


def _group(raw: Any, *, index: int, source: str, read: ReadMapping, gpu_label: str,
           gpu_resource: str, provisioning: Provisioning) -> NodeGroupConfig:
    entry = Section(raw, owner=f"{source}: nodeGroups[{index}]")
    group_id = entry.string("id")
    if not DNS_LABEL.match(group_id) or len(group_id) > MAX_GROUP_ID:
        raise entry.error("id", f"{group_id!r} must be lowercase letters, digits and '-', "
                                f"at most {MAX_GROUP_ID} characters")
    section = Section(raw, owner=f"{source}: node group {group_id!r}")
    section.check_keys(GROUP_KEYS)
    min_size = section.integer("minSize", default=0, high=MAX_GROUP_SIZE)
    max_size = section.integer("maxSize", high=MAX_GROUP_SIZE)
    if max_size < min_size:
        raise section.error("maxSize", f"{max_size} is below minSize {min_size}")
    given = [key for key in TEMPLATE_KEYS if section.has(key)]
    if len(given) != 1:
        raise section.error("node", f"give exactly one of {', '.join(TEMPLATE_KEYS)} "
                                    f"(found {', '.join(given) or 'none'})")
    owner = section.owner
    if given[0] == "shape":
        template = from_shape(section.data["shape"], owner=owner, field="shape",
                              gpu_label=gpu_label, gpu_resource=gpu_resource)
    elif given[0] == "node":
        template = from_node(section.data["node"], owner=owner, field="node")
    else:
        ref = section.string("nodeFile")
        template = from_node(read(ref, f"{owner}: nodeFile"), owner=owner,
                             field=f"nodeFile {ref}")
    overrides = parse_overrides(section.data.get("options") or {}, owner=owner)
    if section.has("provisioning"):
        provisioning = parse_provisioning(section.data["provisioning"], owner=owner,
                                          field="provisioning", defaults=provisioning)
    return NodeGroupConfig(id=group_id, min_size=min_size, max_size=max_size,
                           price_per_hour=section.number("pricePerHour", default=0.0),
                           template=template, overrides=overrides, provisioning=provisioning)
