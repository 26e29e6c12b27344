import json
from pathlib import Path

import pytest

from benchmarks import fidelity_hpa_load as load
from benchmarks import fidelity_hpa_whatif as whatif
from simkube.cloudprov.config import load_file
from simkube.core.quantities import parse_quantity
from simkube.env.services.commands import DEFAULT_NODE_GROUPS

pytestmark = pytest.mark.unit


def replicas_per_node(allocatable_cpu: str) -> int:
    return int(parse_quantity(allocatable_cpu) * 1000) // load.CPU_REQUEST_M


def test_the_what_if_nodes_take_two_replicas_each(tmp_path: Path) -> None:
    path = tmp_path / "groups.yaml"
    path.write_text(whatif.NODE_GROUPS)
    (group,) = load_file(path).groups.values()
    assert replicas_per_node(group.template.allocatable["cpu"]) == 2
    assert group.max_size * 2 >= load.MAX_REPLICAS  # the HPA is never short of nodes


def test_the_truth_holds_every_replica_on_its_minimum_nodes() -> None:
    groups = load_file(DEFAULT_NODE_GROUPS).groups.values()
    room = sum(g.min_size * replicas_per_node(g.template.allocatable["cpu"]) for g in groups)
    assert room >= load.MAX_REPLICAS


def test_nodes_and_cost_are_read_from_the_summary(tmp_path: Path) -> None:
    (tmp_path / "summary.json").write_text(json.dumps({
        "node_hours": 0.5, "cost_usd": 0.048,
        "groups": {"small": {"peak_nodes": 4}, "large": {"peak_nodes": 1}}}))
    assert whatif.nodes_and_cost(tmp_path) == {"peak_nodes": 5, "node_hours": 0.5,
                                               "cost_usd": 0.048}
