"""The one error hierarchy: every error simkube raises on purpose is a ``SimkubeError``.

Every error a user can cause carries a message that says what is wrong and what to do about
it; the CLI prints ``str(error)`` and exits with the error's ``exit_code`` instead of a
traceback, and a gRPC service answers it with its ``status`` (``core.serving.status_code``
turns it into grpc's code) and the same message. Programming errors stay ordinary exceptions
so they are never mistaken for input problems.

The refusals a service gives (a bad argument, something not found or taken, a state that
forbids the request, a dependency out of reach, ...) are categories here, each declaring its
gRPC status code and exit code once; the services' own errors are leaves of those categories
(the driver's ``SimulationNotFoundError`` is a ``NotFoundError``), and the API server's
refusals are ``kubeapi.ApiError``, whose status follows from its HTTP code.
"""

from __future__ import annotations

import enum
from typing import Any, ClassVar


class Status(enum.Enum):
    """The gRPC status codes our errors answer with, named as ``grpc.StatusCode`` names them
    (kept apart from grpc so that reading a trace or a flag does not load it)."""

    INTERNAL = enum.auto()
    INVALID_ARGUMENT = enum.auto()
    NOT_FOUND = enum.auto()
    ALREADY_EXISTS = enum.auto()
    FAILED_PRECONDITION = enum.auto()
    OUT_OF_RANGE = enum.auto()
    ABORTED = enum.auto()
    UNAVAILABLE = enum.auto()
    UNAUTHENTICATED = enum.auto()
    PERMISSION_DENIED = enum.auto()


class SimkubeError(Exception):
    """Base of every error a user can cause or fix.

    A subclass declares what differs from its base in the class statement:
    ``class Taken(SimkubeError, status=Status.ALREADY_EXISTS, exit_code=3)``.
    """

    exit_code: ClassVar[int] = 1
    # What a service answers when an error without a category of its own ends an RPC.
    default_status: ClassVar[Status] = Status.INTERNAL

    def __init_subclass__(cls, *, status: Status | None = None,
                          exit_code: int | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if status is not None:
            cls.default_status = status
        if exit_code is not None:
            cls.exit_code = exit_code

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    @property
    def status(self) -> Status:
        """The gRPC status code a service answers this error with."""
        return self.default_status

    def __str__(self) -> str:
        text = super().__str__()
        return f"{text}\n  hint: {self.hint}" if self.hint else text


# The categories of refusal, one per status code a caller must tell apart.
class InvalidArgumentError(SimkubeError, status=Status.INVALID_ARGUMENT, exit_code=2):
    """A flag, request field or file has a value that cannot be used."""


class NotFoundError(SimkubeError, status=Status.NOT_FOUND, exit_code=2):
    """What the request names does not exist."""


class AlreadyExistsError(SimkubeError, status=Status.ALREADY_EXISTS, exit_code=3):
    """What the request would create is already taken."""


class FailedPreconditionError(SimkubeError, status=Status.FAILED_PRECONDITION, exit_code=3):
    """Well formed, but the current state does not allow it."""


class OutOfRangeError(SimkubeError, status=Status.OUT_OF_RANGE):
    """Well formed, but past a limit (e.g. a node group's min or max size)."""


class AbortedError(SimkubeError, status=Status.ABORTED):
    """Someone else changed the object meanwhile; nothing was changed, try again."""


class UnavailableError(SimkubeError, status=Status.UNAVAILABLE, exit_code=4):
    """A service or API server the request depends on cannot be reached."""


# Errors of the tools and the local environment.
class ConfigError(InvalidArgumentError):
    """A flag, config file or environment variable has a value we cannot use."""


class EnvironmentStateError(SimkubeError, exit_code=3):
    """The local environment is not in a state that allows the requested operation."""


class BuildError(SimkubeError, exit_code=4):
    """Building or caching an upstream binary failed."""
