from __future__ import annotations

import pytest
from grpc import StatusCode

from simkube.core.errors import (
    AbortedError,
    AlreadyExistsError,
    BuildError,
    ConfigError,
    EnvironmentStateError,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    OutOfRangeError,
    SimkubeError,
    Status,
    UnavailableError,
)

pytestmark = pytest.mark.unit


def test_message_and_hint() -> None:
    error = ConfigError("bad port", hint="pick another")
    assert str(error) == "bad port\n  hint: pick another"
    assert str(SimkubeError("plain")) == "plain"


def test_each_kind_has_its_own_exit_code() -> None:
    codes = {cls.exit_code for cls in (SimkubeError, ConfigError, EnvironmentStateError,
                                       BuildError)}
    assert len(codes) == 4


@pytest.mark.parametrize(("category", "status", "exit_code"), [
    (InvalidArgumentError, Status.INVALID_ARGUMENT, 2),
    (NotFoundError, Status.NOT_FOUND, 2),
    (AlreadyExistsError, Status.ALREADY_EXISTS, 3),
    (FailedPreconditionError, Status.FAILED_PRECONDITION, 3),
    (OutOfRangeError, Status.OUT_OF_RANGE, 1),
    (AbortedError, Status.ABORTED, 1),
    (UnavailableError, Status.UNAVAILABLE, 4),
    (ConfigError, Status.INVALID_ARGUMENT, 2),
    (EnvironmentStateError, Status.INTERNAL, 3),
    (BuildError, Status.INTERNAL, 4),
    (SimkubeError, Status.INTERNAL, 1)])
def test_each_category_declares_its_status_and_exit_code_once(
        category: type[SimkubeError], status: Status, exit_code: int) -> None:
    error = category("m")
    assert (error.status, error.exit_code) == (status, exit_code)


def test_a_leaf_inherits_its_category_and_may_change_one_thing() -> None:
    class TakenError(AlreadyExistsError):
        pass

    class SlowError(UnavailableError, exit_code=7):
        pass
    assert (TakenError("t").status, TakenError("t").exit_code) == (
        Status.ALREADY_EXISTS, 3)
    assert (SlowError("s").status, SlowError("s").exit_code) == (Status.UNAVAILABLE, 7)
    assert UnavailableError.exit_code == 4


def test_every_status_is_a_grpc_status_code() -> None:
    for status in Status:
        assert status.name in StatusCode.__members__
