"""Error types shared by every component.

Every error a user can cause carries a message that says what is wrong and what to do about
it; the CLI prints ``str(error)`` and exits with the error's ``exit_code`` instead of a
traceback. Programming errors stay ordinary exceptions so they are never mistaken for input
problems.
"""

from __future__ import annotations


class SimkubeError(Exception):
    """Base of every error a user can cause or fix."""

    exit_code: int = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}\n  hint: {self.hint}"
        return self.message


class ConfigError(SimkubeError):
    """A flag, config file or environment variable has a value we cannot use."""

    exit_code = 2


class EnvironmentStateError(SimkubeError):
    """The local environment is not in a state that allows the requested operation."""

    exit_code = 3


class BuildError(SimkubeError):
    """Building or caching an upstream binary failed."""

    exit_code = 4
