"""The controller's rules as pure decisions: finalizer, Pending, Failed, one slot, Blocked."""

from __future__ import annotations

from typing import Any

import pytest

from simkube.ctrl.decisions import Action, choose_holder, needs_block_write, plan
from simkube.simulation.names import FINALIZER

pytestmark = pytest.mark.unit


def sim(name: str, *, created: str = "2026-01-01T00:00:00Z", state: str | None = None,
        finalizer: bool = True, deleting: bool = False, **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "uid": f"uid-{name}", "creationTimestamp": created,
                            "finalizers": [FINALIZER] if finalizer else []}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T01:00:00Z"
    spec.setdefault("trace", {"path": "/t.sktrace"})
    return {"metadata": meta, "spec": spec, "status": {"state": state} if state else {}}


def actions(decisions: Any) -> dict[str, tuple[Action, str]]:
    return {d.name: (d.action, d.message) for d in decisions}


def test_new_simulation_gets_the_finalizer_first() -> None:
    assert actions(plan([sim("a", finalizer=False)], lease_holder=None, active=None)) == {
        "a": (Action.ADD_FINALIZER, "")}


def test_then_pending() -> None:
    assert actions(plan([sim("a")], lease_holder=None, active=None))["a"][0] == \
        Action.SET_PENDING


def test_invalid_spec_fails_with_the_reason() -> None:
    decided = actions(plan([sim("a", speed=-1)], lease_holder=None, active=None))
    assert decided["a"] == (Action.FAIL_SPEC, "spec.speed -1 must be a positive number")


def test_pending_starts_when_the_slot_is_free() -> None:
    decided = actions(plan([sim("a", state="Pending")], lease_holder=None, active=None))
    assert decided["a"][0] == Action.START


def test_oldest_starts_and_the_others_are_blocked_naming_it() -> None:
    decided = actions(plan([sim("young", created="2026-01-01T00:00:05Z", state="Pending"),
                            sim("old", created="2026-01-01T00:00:01Z", state="Pending")],
                           lease_holder=None, active=None))
    assert decided["old"][0] == Action.START
    assert decided["young"] == (Action.BLOCK, "waiting for simulation old to finish (one "
                                               "runs at a time)")


def test_same_second_is_ordered_by_name() -> None:
    decided = actions(plan([sim("b", state="Pending"), sim("a", state="Pending")],
                           lease_holder=None, active=None))
    assert decided["a"][0] == Action.START
    assert decided["b"][0] == Action.BLOCK


def test_active_keeps_the_slot_over_an_older_newcomer() -> None:
    decided = actions(plan([sim("old", created="2026-01-01T00:00:00Z", state="Pending"),
                            sim("running", created="2026-01-02T00:00:00Z", state="Running")],
                           lease_holder="running", active="running"))
    assert decided["running"][0] == Action.KEEP
    assert decided["old"][0] == Action.BLOCK


def test_after_a_restart_the_lease_holder_resumes_first() -> None:
    decided = actions(plan([sim("old", created="2026-01-01T00:00:00Z", state="Blocked"),
                            sim("held", created="2026-01-02T00:00:00Z", state="Running")],
                           lease_holder="held", active=None))
    assert decided["held"][0] == Action.START
    assert decided["old"][0] == Action.BLOCK


def test_a_stale_lease_holder_is_ignored() -> None:
    decided = actions(plan([sim("gone", state="Finished"), sim("next", state="Blocked")],
                           lease_holder="gone", active=None))
    assert decided == {"gone": (Action.KEEP, ""), "next": (Action.START, "")}
    assert choose_holder([], lease_holder="x", active=None) is None


def test_deleted_simulation_is_finalized_and_not_a_candidate() -> None:
    decided = actions(plan([sim("a", state="Running", deleting=True),
                            sim("b", state="Blocked")], lease_holder="a", active="a"))
    assert decided["a"][0] == Action.FINALIZE
    assert decided["b"][0] == Action.START
    gone = plan([sim("a", deleting=True, finalizer=False)], lease_holder=None, active=None)
    assert actions(gone)["a"][0] == Action.KEEP


def test_terminal_simulations_are_left_alone() -> None:
    decided = actions(plan([sim("f", state="Finished"), sim("x", state="Failed", speed=-1)],
                           lease_holder=None, active=None))
    assert decided == {"f": (Action.KEEP, ""), "x": (Action.KEEP, "")}


def test_block_is_written_only_when_it_is_news() -> None:
    message = "waiting for simulation a to finish (one runs at a time)"
    blocked = sim("b", state="Blocked")
    blocked["status"]["message"] = message
    assert not needs_block_write(blocked, message)
    assert needs_block_write(sim("b", state="Pending"), message)
    assert needs_block_write(blocked, "waiting for simulation c to finish")
