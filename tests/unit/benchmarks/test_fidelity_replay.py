"""Simulation names per speed are DNS labels."""

from __future__ import annotations

import re

import pytest

from benchmarks.fidelity_replay import simulation_name

pytestmark = pytest.mark.unit
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


@pytest.mark.parametrize(("speed", "name"), [(1.0, "fidelity-x1"), (10.0, "fidelity-x10"),
                                             (2.5, "fidelity-x2-5"), (0.25, "fidelity-x0-25")])
def test_one_name_per_speed(speed: float, name: str) -> None:
    assert simulation_name(speed) == name
    assert DNS_LABEL.fullmatch(name)
