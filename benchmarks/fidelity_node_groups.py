"""The fidelity benchmark's node groups: the defaults, with room for the workload's peak.

The truth and every replay run on the groups ``skctl env up --services`` gives by default
(shapes, prices, provisioning delays), so what the benchmark measures is what a user gets.
Only the maxima may differ: the workload's peak needs about 19 ``small`` nodes, the default
group stops at 20, and an autoscaler held at its ceiling would decide differently from one
that is not (Cluster Autoscaler caps a plan at the group's room; Karpenter's NodePool limits
come from the same maxima). Each group gets at least twice the nodes its pods could ever need
at once, counted from the workload, so neither truth nor replay comes near a ceiling.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import yaml

from benchmarks.fidelity_workload import BURST, SERVICES
from simkube.cloudprov.config import load_file
from simkube.core.quantities import parse_quantity
from simkube.env.services.commands import DEFAULT_NODE_GROUPS

HEADROOM = 2  # times the nodes the peak needs
FILE_NAME = "fidelity-node-groups.yaml"


def nodes_needed(*, source: Path = DEFAULT_NODE_GROUPS) -> dict[str, int]:
    """Per group, the nodes that hold every one of its pods at their highest count at once
    (more than the workload ever asks: its services peak at different hours)."""
    groups = load_file(source).groups
    needed: dict[str, int] = {}
    for group in {service.group for service in (*SERVICES, BURST)}:
        members = [service for service in (*SERVICES, BURST) if service.group == group]
        node_cpu = parse_quantity(groups[group].template.allocatable["cpu"])
        per_node = max(1, int(node_cpu // parse_quantity(members[0].cpu)))
        needed[group] = math.ceil(sum(service.high for service in members) / per_node)
    return needed


def max_sizes(*, source: Path = DEFAULT_NODE_GROUPS) -> Mapping[str, int]:
    """Each group's maximum: its default, or ``HEADROOM`` times what the peak needs."""
    needed = nodes_needed(source=source)
    return {group_id: max(group.max_size, HEADROOM * needed.get(group_id, 0))
            for group_id, group in load_file(source).groups.items()}


def write(*, workdir: Path, source: Path = DEFAULT_NODE_GROUPS) -> Path:
    """The benchmark's node groups file in ``workdir``, checked as sk-cloudprov reads it."""
    sizes = max_sizes(source=source)
    data = yaml.safe_load(source.read_text())
    for group in data["nodeGroups"]:
        group["maxSize"] = sizes[group["id"]]
    path = workdir / FILE_NAME
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    load_file(path)  # a file sk-cloudprov would refuse must stop the benchmark here
    return path
