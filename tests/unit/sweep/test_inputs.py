from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from simkube.sweep.inputs import edit_steps, write_inputs
from simkube.sweep.points import build_points
from simkube.sweep.spec import load_sweep
from simkube.trace.tools.edit_steps import ScaleReplicas, ScaleResources
from tests.unit.sweep.files import BASE, write_sweep

pytestmark = pytest.mark.unit
DSB = Path(__file__).parents[2] / "data" / "simkube" / "dsb-scaling.sktrace"


def test_trace_edits_become_the_trace_edit_steps(tmp_path: Path) -> None:
    sweep = load_sweep(write_sweep(tmp_path, axes=[
        {"traceEdit": "replicas", "values": [3]}, {"traceEdit": "requests", "values": [0.5]}]))
    (point,) = build_points(sweep)
    assert edit_steps(point) == [ScaleReplicas(factor=3.0), ScaleResources(cpu=0.5, memory=0.5)]


def test_a_point_writes_only_what_differs_from_the_base(tmp_path: Path) -> None:
    base = {**BASE, "trace": str(DSB)}
    sweep = load_sweep(write_sweep(tmp_path, axes=[
        {"traceEdit": "replicas", "values": [1, 2]},
        {"nodeGroups": {"group": "small", "field": "maxSize"}, "values": [20, 4]}], base=base))
    points = build_points(sweep)
    plain = write_inputs(sweep, points[0], folder=tmp_path / "p0")
    assert (plain.trace, plain.node_groups) == (DSB, None)
    edited = write_inputs(sweep, points[3], folder=tmp_path / "p3")
    assert edited.trace == tmp_path / "p3" / "trace.sktrace"
    assert edited.trace.stat().st_size > 0
    assert edited.node_groups == tmp_path / "p3" / "node-groups.yaml"
    groups = yaml.safe_load(edited.node_groups.read_text())["nodeGroups"]
    assert [group["maxSize"] for group in groups] == [4, 10]
