"""Karpenter's view of the node groups: instance types, NodePools and KWOK node classes.

Cluster Autoscaler and Karpenter must face the same catalogue and prices, or a comparison
says more about the set-up than about the autoscalers. So both read the node-groups file
sk-cloudprov reads (``cloudprov.config``), and this module translates it:

- each group's shape is an *instance type* of Karpenter's KWOK provider, and the group itself
  one *offering* of it (its zone, on demand, its price). The offering also carries the group's
  labels and ``simkube.dev/node-group``: KWOK's provider puts single-valued offering
  requirements on the node, so pods selecting a group's labels get that group's nodes and the
  results recorder counts Karpenter's nodes per group exactly as it counts CA's;
- Karpenter's KWOK provider subtracts a fixed kube-reserved (100m CPU, 10Mi) from an instance
  type's resources, so they are the group's allocatable plus that: the nodes Karpenter makes
  then have the very allocatable sk-cloudprov's nodes have;
- groups that share taints and provisioning timing share one *NodePool* (taints and the node
  class are NodePool-wide), limited to its groups and to the sum of their ``maxSize``
  (nodes, CPU, memory). Karpenter has no minimum: ``minSize`` has no counterpart;
- each NodePool's *KWOKNodeClass* delays registration by the groups' provisioning ``delay``,
  and its template annotates nodes with ``readyAfter`` (the KWOK stage that makes fake nodes
  Ready honours it), in wall time at the run's speed. The node class's delay is whole
  seconds (its CRD's pattern) and Karpenter sleeps it on the wall, so for a run faster than
  real time the class carries the delay in trace time, to the millisecond, in an annotation
  (``REGISTRATION_DELAY_ANNOTATION``) and none in its spec: the project's Karpenter build
  waits it, and the readiness, on the run's pace, holds included
  (``env/toolchain/karpenter/registration.go``). Nodes start with the startup taint
  ``node.kubernetes.io/not-ready``, like sk-cloudprov's: no pod binds before they are Ready.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Any

from simkube.cloudprov.config import CloudConfig, NodeGroupConfig
from simkube.cloudprov.naming import GROUP_LABEL, READY_AFTER_ANNOTATION
from simkube.cloudprov.naming import WellKnownLabel as L
from simkube.core.durations import go_duration
from simkube.core.errors import ConfigError
from simkube.core.fake_nodes import NODE_TYPE_LABEL, NODE_TYPE_VALUE
from simkube.core.quantities import format_cpu, format_memory, parse_quantity
from simkube.core.simtime import REAL_TIME, TimeScale
from simkube.env.controlplane.components import FAKE_NODE_ANNOTATION, FAKE_NODE_VALUE

NODEPOOL_API = "karpenter.sh/v1"
NODECLASS_GROUP = "karpenter.kwok.sh"
NODECLASS_API = f"{NODECLASS_GROUP}/v1alpha1"
CAPACITY_TYPE = "karpenter.sh/capacity-type"
ON_DEMAND = "on-demand"
KUBE_RESERVED = {"cpu": Decimal("0.1"), "memory": Decimal(10 * 2**20)}
# Labels Karpenter derives itself; a group's value for them must not become a requirement.
DERIVED_LABELS = frozenset({L.INSTANCE_TYPE, L.ZONE, L.OS, L.ARCH, L.HOSTNAME, L.BETA_OS,
                            L.BETA_ARCH, L.BETA_INSTANCE_TYPE, L.BETA_ZONE, CAPACITY_TYPE,
                            "topology.kubernetes.io/region", GROUP_LABEL})
POOL_PREFIX = "simkube"
NOT_READY_TAINT = "node.kubernetes.io/not-ready"
# A node class's registration delay in trace time, read by the build (registration.go).
REGISTRATION_DELAY_ANNOTATION = "simkube.dev/registration-delay"


class ConsolidationPolicy(StrEnum):
    WHEN_EMPTY = "WhenEmpty"
    WHEN_EMPTY_OR_UNDERUTILIZED = "WhenEmptyOrUnderutilized"


@dataclass(frozen=True, kw_only=True)
class Disruption:
    """NodePool disruption settings; ``consolidate_after_ms`` in wall time (``None``: Never)."""

    policy: ConsolidationPolicy = ConsolidationPolicy.WHEN_EMPTY_OR_UNDERUTILIZED
    consolidate_after_ms: int | None = 0  # Karpenter's own default
    budget_nodes: str = "10%"  # Karpenter's own default budget

    def to_state(self) -> dict[str, Any]:
        return {"policy": str(self.policy), "consolidateAfterMs": self.consolidate_after_ms,
                "budgetNodes": self.budget_nodes}

    @classmethod
    def from_state(cls, data: Mapping[str, Any]) -> Disruption:
        if not data:
            return cls()
        return cls(policy=ConsolidationPolicy(data["policy"]),
                   consolidate_after_ms=data["consolidateAfterMs"],
                   budget_nodes=str(data["budgetNodes"]))


@dataclass(frozen=True, kw_only=True)
class PoolPlan:
    name: str
    groups: tuple[NodeGroupConfig, ...]

    @property
    def delay_s(self) -> float:
        return self.groups[0].provisioning.delay

    @property
    def ready_after_s(self) -> float:
        return self.groups[0].provisioning.ready_after


def instance_types(config: CloudConfig) -> list[dict[str, Any]]:
    """The instance-types file of Karpenter's KWOK provider (``--instance-types-file-path``)."""
    types: dict[str, dict[str, Any]] = {}
    for group in config.groups.values():
        labels = group.template.labels
        name = labels[L.INSTANCE_TYPE]
        resources = _resources(group)
        entry = types.setdefault(name, {
            "name": name, "architecture": labels.get(L.ARCH, "amd64"),
            "operatingSystems": [labels.get(L.OS, "linux")], "resources": resources,
            "offerings": []})
        if entry["resources"] != resources:
            other = next(o["group"] for o in entry["offerings"])
            raise ConfigError(
                f"node groups {other!r} and {group.id!r} are both instance type {name!r} but "
                "differ in capacity; Karpenter knows one shape per instance type",
                hint="give one of them its own shape.instanceType")
        entry["offerings"].append({"group": group.id, "Price": group.price_per_hour,
                                   "Available": True, "Requirements": _offering(group)})
    return [{**entry, "offerings": [{k: v for k, v in o.items() if k != "group"}
                                    for o in entry["offerings"]]} for entry in types.values()]


def _resources(group: NodeGroupConfig) -> dict[str, str]:
    resources = dict(group.template.allocatable)
    for name, reserved in KUBE_RESERVED.items():
        total = parse_quantity(resources[name]) + reserved
        resources[name] = format_cpu(total) if name == "cpu" else format_memory(total)
    return resources


def _offering(group: NodeGroupConfig) -> list[dict[str, Any]]:
    labels = group.template.labels
    pairs = {CAPACITY_TYPE: ON_DEMAND, str(L.ZONE): labels[L.ZONE], GROUP_LABEL: group.id}
    pairs.update({k: v for k, v in labels.items() if k not in DERIVED_LABELS})
    return [{"key": key, "operator": "In", "values": [value]} for key, value in pairs.items()]


def pool_plans(config: CloudConfig) -> list[PoolPlan]:
    """Groups that can share a NodePool (same taints, same provisioning timing), in order."""
    shared: dict[tuple[Any, ...], list[NodeGroupConfig]] = {}
    for group in config.groups.values():
        key = (group.template.taints, group.provisioning.delay, group.provisioning.ready_after)
        shared.setdefault(key, []).append(group)
    if len(shared) == 1:
        return [PoolPlan(name=POOL_PREFIX, groups=tuple(next(iter(shared.values()))))]
    return [PoolPlan(name=f"{POOL_PREFIX}-{groups[0].id}", groups=tuple(groups))
            for groups in shared.values()]


def node_class(plan: PoolPlan, *, scale: TimeScale = REAL_TIME) -> dict[str, Any]:
    """The pool's node class; faster than real time its delay is the build's to wait."""
    if not scale.faster_than_real_time:
        return {"apiVersion": NODECLASS_API, "kind": "KWOKNodeClass",
                "metadata": {"name": plan.name},
                "spec": {"nodeRegistrationDelay": _wall(plan.delay_s, scale)}}
    return {"apiVersion": NODECLASS_API, "kind": "KWOKNodeClass",
            "metadata": {"name": plan.name, "annotations": {
                REGISTRATION_DELAY_ANNOTATION: go_duration(round(plan.delay_s * 1000))}},
            "spec": {"nodeRegistrationDelay": "0s"}}


def node_pool(plan: PoolPlan, *, disruption: Disruption,
              scale: TimeScale = REAL_TIME) -> dict[str, Any]:
    groups = plan.groups
    limits = {"nodes": str(sum(g.max_size for g in groups))}
    for resource in ("cpu", "memory"):
        total = sum((parse_quantity(g.template.capacity[resource]) * g.max_size
                     for g in groups), Decimal(0))
        limits[resource] = format_cpu(total) if resource == "cpu" else format_memory(total)
    types = sorted({g.template.labels[L.INSTANCE_TYPE] for g in groups})
    taints = [{"key": FAKE_NODE_ANNOTATION, "value": FAKE_NODE_VALUE, "effect": "NoSchedule"},
              *(t.manifest() for t in groups[0].template.taints)]
    after = ("Never" if disruption.consolidate_after_ms is None
             else _wall(disruption.consolidate_after_ms / 1000, REAL_TIME))
    return {"apiVersion": NODEPOOL_API, "kind": "NodePool", "metadata": {"name": plan.name},
            "spec": {
                "limits": limits,
                "disruption": {"consolidationPolicy": str(disruption.policy),
                               "consolidateAfter": after,
                               "budgets": [{"nodes": disruption.budget_nodes}]},
                "template": {
                    "metadata": {
                        # The label replayed pods select, as on every simulated node.
                        "labels": {NODE_TYPE_LABEL: NODE_TYPE_VALUE},
                        "annotations": {  # KWOK's stage reads Go durations
                            READY_AFTER_ANNOTATION: go_duration(
                                scale.to_wall(plan.ready_after_s * 1000))}},
                    "spec": {
                        "nodeClassRef": {"group": NODECLASS_GROUP,
                                         "kind": "KWOKNodeClass", "name": plan.name},
                        "expireAfter": "Never",
                        "taints": taints,
                        # As a kubelet registers: NotReady, so nothing binds until KWOK makes
                        # it Ready after readyAfter and the controller manager lifts this.
                        "startupTaints": [{"key": NOT_READY_TAINT, "effect": "NoSchedule"}],
                        "requirements": [
                            {"key": str(L.INSTANCE_TYPE), "operator": "In", "values": types},
                            {"key": CAPACITY_TYPE, "operator": "In", "values": [ON_DEMAND]},
                            {"key": GROUP_LABEL, "operator": "In",
                             "values": [g.id for g in groups]}]}}}}


def _wall(trace_s: float, scale: TimeScale) -> str:
    """A trace-time duration at ``scale`` the way Karpenter's CRDs accept it: whole seconds
    (``^([0-9]+(s|m|h))+$``), so under half a second is ``0s``, at once."""
    return f"{round(scale.to_wall(trace_s))}s"


def manifests(config: CloudConfig, *, disruption: Disruption,
              scale: TimeScale = REAL_TIME) -> list[dict[str, Any]]:
    """Node classes first (a NodePool refers to one), then the NodePools."""
    plans = pool_plans(config)
    return ([node_class(plan, scale=scale) for plan in plans]
            + [node_pool(plan, disruption=disruption, scale=scale) for plan in plans])


def pool_of_group(config: CloudConfig) -> Mapping[str, str]:
    return {group.id: plan.name for plan in pool_plans(config) for group in plan.groups}
