"""The driver's user-facing errors, one class per answer a caller needs to tell apart.

The gRPC service maps each class to a status code (bad input → INVALID_ARGUMENT, unknown
simulation → NOT_FOUND, name or namespace taken → ALREADY_EXISTS, wrong state →
FAILED_PRECONDITION, unreachable tracer or cluster → UNAVAILABLE); the CLI prints the
message and exits with ``exit_code``. Every one is raised before anything is created, or
after what was created has been removed again.
"""

from __future__ import annotations

from simkube.core.errors import SimkubeError


class DriverInputError(SimkubeError):
    """A flag or request field has a value the driver cannot use; ``field`` names it."""

    exit_code = 2

    def __init__(self, message: str, *, field: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.field = field


class TraceNotFoundError(SimkubeError):
    """The trace path or URL names nothing."""

    exit_code = 2


class SimulationNotFoundError(SimkubeError):
    exit_code = 2


class SimulationConflictError(SimkubeError):
    """The name, root or a virtual namespace is already taken."""

    exit_code = 3


class SimulationStateError(SimkubeError):
    """The simulation is not in a state that allows the request (e.g. pausing a finished one)."""

    exit_code = 3


class UnavailableError(SimkubeError):
    """A service the driver depends on (the tracer, the API server) cannot be reached."""

    exit_code = 4
