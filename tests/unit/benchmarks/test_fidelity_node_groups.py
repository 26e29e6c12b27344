"""The fidelity benchmark's node groups: the defaults, with room for the workload's peak."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from benchmarks.fidelity_node_groups import HEADROOM, max_sizes, nodes_needed, write
from benchmarks.fidelity_workload import BURST, SERVICES
from simkube.cloudprov.config import load_file
from simkube.core.errors import ConfigError
from simkube.env.services.commands import DEFAULT_NODE_GROUPS

pytestmark = pytest.mark.unit


def test_the_peak_is_counted_in_whole_nodes_per_group() -> None:
    # four 500m pods on a 2-CPU small node, two 3-CPU batch pods on an 8-CPU large one
    small = sum(service.high for service in SERVICES)
    assert nodes_needed() == {"small": -(-small // 4), "large": -(-BURST.high // 2)}


def test_every_group_has_twice_the_nodes_its_peak_needs_and_never_less_than_the_default() -> None:
    defaults = load_file(DEFAULT_NODE_GROUPS).groups
    needed = nodes_needed()
    sizes = max_sizes()
    assert set(sizes) == set(defaults)
    for group_id, size in sizes.items():
        assert size >= defaults[group_id].max_size
        assert size >= HEADROOM * needed.get(group_id, 0)
    assert sizes["small"] > defaults["small"].max_size  # the reason the module exists


def test_the_written_file_changes_only_the_maxima(tmp_path: Path) -> None:
    path = write(workdir=tmp_path)
    written, default = load_file(path), load_file(DEFAULT_NODE_GROUPS)
    assert written.namespace == default.namespace
    for group_id, group in written.groups.items():
        assert group.max_size == max_sizes()[group_id]
        assert group.min_size == default.groups[group_id].min_size
        assert group.price_per_hour == default.groups[group_id].price_per_hour
        assert group.template == default.groups[group_id].template
        assert group.provisioning == default.groups[group_id].provisioning


def test_a_groups_file_sk_cloudprov_would_refuse_stops_the_benchmark(tmp_path: Path) -> None:
    source = tmp_path / "groups.yaml"
    data = yaml.safe_load(DEFAULT_NODE_GROUPS.read_text())
    data["nodeGroups"][0]["minSize"] = 500  # above any maximum the benchmark would write
    source.write_text(yaml.safe_dump(data))
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(ConfigError, match="minSize"):
        write(workdir=out, source=source)
    assert not list(out.iterdir())  # nothing half-written
