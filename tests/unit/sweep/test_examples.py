"""The sweep files the repository ships (the docs' example, the benchmark's) read whole and
plan the points their comments promise."""

from __future__ import annotations

from pathlib import Path

import pytest

from simkube.sweep.points import build_points
from simkube.sweep.spec import load_sweep

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(("path", "points", "base_point"), [
    ("docs/examples/sweeps/dsb-ca.yaml", 12, 8),
    ("benchmarks/sweeps/throughput.yaml", 6, 4),
])
def test_a_shipped_sweep_file_plans_its_points(path: str, points: int,
                                               base_point: int) -> None:
    sweep = load_sweep(ROOT / path)
    built = build_points(sweep)
    assert len(built) == points
    assert sweep.base.trace.name == "dsb-scaling.sktrace"
    # The 10-minute unneeded time is CA's own default: that point runs the base as it is.
    assert built[base_point].label == "base"
