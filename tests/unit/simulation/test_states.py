"""States and condition types are the strings kubectl users and skctl read."""

from __future__ import annotations

import pytest

from simkube.simulation.states import ACTIVE, TERMINAL, ConditionType, State

pytestmark = pytest.mark.unit


def test_states_are_spelled_as_in_the_status() -> None:
    assert [state.value for state in State] == [
        "Pending", "Blocked", "Initializing", "Running", "Paused", "Finished", "Failed"]
    assert State("Running") is State.RUNNING


def test_a_state_is_terminal_active_or_waiting_never_two() -> None:
    assert not TERMINAL & ACTIVE
    assert set(State) - TERMINAL - ACTIVE == {State.PENDING, State.BLOCKED}


def test_condition_types() -> None:
    assert {c.value for c in ConditionType} == {"LeaseHeld", "Completed"}
    assert ConditionType.LEASE_HELD == "LeaseHeld"  # a str where the status wants one
