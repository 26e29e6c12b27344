"""The driver's user-facing errors, one class per answer a caller needs to tell apart.

Each is a leaf of a category in ``core.errors``, which carries its gRPC status code and exit
code (bad input → INVALID_ARGUMENT, unknown trace or simulation → NOT_FOUND, name or namespace
taken → ALREADY_EXISTS, wrong state → FAILED_PRECONDITION; an unreachable tracer or cluster is
core's ``UnavailableError``); the CLI prints the message and exits with ``exit_code``. Every
one is raised before anything is created, or after what was created has been removed again.
"""

from __future__ import annotations

from simkube.core.errors import (
    AlreadyExistsError,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
)


class DriverInputError(InvalidArgumentError):
    """A flag or request field has a value the driver cannot use; ``field`` names it."""

    def __init__(self, message: str, *, field: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.field = field


class TraceNotFoundError(NotFoundError):
    """The trace path or URL names nothing."""


class SimulationNotFoundError(NotFoundError):
    """No simulation of that name is known to this driver."""


class SimulationConflictError(AlreadyExistsError):
    """The name, root or a virtual namespace is already taken."""


class SimulationStateError(FailedPreconditionError):
    """The simulation is not in a state that allows the request (e.g. pausing a finished one)."""
