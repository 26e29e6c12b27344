"""A spec error is a user's error: printed as its message, with the ordinary exit code."""

from __future__ import annotations

import pytest

from simkube.core.errors import SimkubeError
from simkube.simulation import spec
from simkube.simulation.errors import SpecError

pytestmark = pytest.mark.unit


def test_spec_error_is_a_simkube_error_and_the_spec_module_offers_it() -> None:
    error = SpecError("spec.speed 0 must be a positive number")
    assert isinstance(error, SimkubeError)
    assert str(error) == error.message
    assert spec.SpecError is SpecError
