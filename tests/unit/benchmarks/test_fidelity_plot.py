"""The error-against-speed plot is written even when some figures are infinite or missing."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from benchmarks.fidelity_plot import draw

pytestmark = pytest.mark.unit


def test_the_plot_is_a_png(tmp_path: Path) -> None:
    worst: dict[float, dict[str, float | None]] = {
        1.0: {"nodes_curve": 0.01, "node_hours": -0.02, "cost": 0.0, "pending_p50": None,
              "pending_p90": 0.04},
        10.0: {"nodes_curve": 0.08, "node_hours": 0.05, "cost": -0.06, "pending_p50": math.inf,
               "pending_p90": 0.3}}
    path = draw(worst_by_speed=worst, path=tmp_path / "out" / "error.png", title="test")
    assert path.read_bytes().startswith(b"\x89PNG")
