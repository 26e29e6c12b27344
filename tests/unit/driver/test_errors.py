from __future__ import annotations

import pytest

from simkube.core.errors import SimkubeError, Status
from simkube.driver.errors import (
    DriverInputError,
    SimulationConflictError,
    SimulationNotFoundError,
    SimulationStateError,
    TraceNotFoundError,
)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("error", "status", "exit_code"), [
    (DriverInputError("bad speed", field="speed"), Status.INVALID_ARGUMENT, 2),
    (TraceNotFoundError("no trace"), Status.NOT_FOUND, 2),
    (SimulationNotFoundError("no sim"), Status.NOT_FOUND, 2),
    (SimulationConflictError("taken"), Status.ALREADY_EXISTS, 3),
    (SimulationStateError("finished"), Status.FAILED_PRECONDITION, 3)])
def test_each_error_answers_with_its_status_and_exit_code(
        error: SimkubeError, status: Status, exit_code: int) -> None:
    assert (error.status, error.exit_code) == (status, exit_code)


def test_input_errors_name_the_field() -> None:
    error = DriverInputError("speed must be positive", field="speed", hint="try 10")
    assert error.field == "speed"
    assert str(error) == "speed must be positive\n  hint: try 10"
