"""The error a Simulation's spec raises, shared by the modules that parse its parts.

sk-ctrl copies the message into ``status.message`` and an Event; skctl turns it into a
``ConfigError`` before anything is created. Its own module so the spec and its trace source
can both raise it without importing each other.
"""

from __future__ import annotations

from simkube.core.errors import SimkubeError


class SpecError(SimkubeError):
    """A Simulation's spec cannot be run; the message names the field."""
