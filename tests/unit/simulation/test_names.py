"""Run names stay DNS labels; the resource's names agree with each other."""

from __future__ import annotations

import pytest

from simkube.simulation.names import (
    API_VERSION,
    CRD_NAME,
    DNS_LABEL,
    MAX_LABEL,
    run_name,
    simulation_path,
)

pytestmark = pytest.mark.unit


def test_run_name() -> None:
    assert run_name("nightly", 1) == "nightly-r1"
    assert run_name("nightly", 100) == "nightly-r100"


def test_long_run_names_are_cut_to_a_dns_label() -> None:
    name = run_name("a" * 63, 12)
    assert len(name) == 63
    assert name == "a" * 59 + "-r12"
    cut = run_name("x" * 59 + "-yyy", 7)  # the cut lands right after a dash
    assert cut == "x" * 59 + "-r7"
    assert DNS_LABEL.fullmatch(cut)
    assert len(run_name("b" * 80, 3)) <= MAX_LABEL


def test_the_api_names() -> None:
    assert API_VERSION == "simkube.dev/v1alpha1"
    assert CRD_NAME == "simulations.simkube.dev"
    assert simulation_path("n") == "/apis/simkube.dev/v1alpha1/simulations/n"
