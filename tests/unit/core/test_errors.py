from __future__ import annotations

import grpc
import pytest

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
    (InvalidArgumentError, grpc.StatusCode.INVALID_ARGUMENT, 2),
    (NotFoundError, grpc.StatusCode.NOT_FOUND, 2),
    (AlreadyExistsError, grpc.StatusCode.ALREADY_EXISTS, 3),
    (FailedPreconditionError, grpc.StatusCode.FAILED_PRECONDITION, 3),
    (OutOfRangeError, grpc.StatusCode.OUT_OF_RANGE, 1),
    (AbortedError, grpc.StatusCode.ABORTED, 1),
    (UnavailableError, grpc.StatusCode.UNAVAILABLE, 4),
    (ConfigError, grpc.StatusCode.INVALID_ARGUMENT, 2),
    (EnvironmentStateError, grpc.StatusCode.INTERNAL, 3),
    (BuildError, grpc.StatusCode.INTERNAL, 4),
    (SimkubeError, grpc.StatusCode.INTERNAL, 1)])
def test_each_category_declares_its_status_and_exit_code_once(
        category: type[SimkubeError], status: grpc.StatusCode, exit_code: int) -> None:
    error = category("m")
    assert (error.status, error.exit_code) == (status, exit_code)


def test_a_leaf_inherits_its_category_and_may_change_one_thing() -> None:
    class TakenError(AlreadyExistsError):
        pass

    class SlowError(UnavailableError, exit_code=7):
        pass
    assert (TakenError("t").status, TakenError("t").exit_code) == (
        grpc.StatusCode.ALREADY_EXISTS, 3)
    assert (SlowError("s").status, SlowError("s").exit_code) == (grpc.StatusCode.UNAVAILABLE, 7)
    assert UnavailableError.exit_code == 4
