"""What a Simulation can be in: its states and the types of condition sk-ctrl sets on it.

They are written by sk-ctrl into ``status.state`` and ``status.conditions`` and read by
skctl (``status``, ``--wait``) and by kubectl users, so they are a protocol and spelled once,
as enums, rather than as strings in every reader.
"""

from __future__ import annotations

from enum import StrEnum


class State(StrEnum):
    PENDING = "Pending"
    BLOCKED = "Blocked"  # waiting for the Lease another Simulation holds
    INITIALIZING = "Initializing"
    RUNNING = "Running"
    PAUSED = "Paused"
    FINISHED = "Finished"
    FAILED = "Failed"


TERMINAL = frozenset({State.FINISHED, State.FAILED})
ACTIVE = frozenset({State.INITIALIZING, State.RUNNING, State.PAUSED})  # a run is in sk-driver


class ConditionType(StrEnum):
    """``status.conditions[].type`` values sk-ctrl writes."""

    LEASE_HELD = "LeaseHeld"  # this Simulation holds the one-at-a-time Lease
    COMPLETED = "Completed"  # every run ended; True when none failed
