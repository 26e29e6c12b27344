"""What to do with each Simulation, decided from what is known, without doing any of it.

The controller's rules live here as pure functions so unit tests cover them exactly: a new
Simulation gets the finalizer, then Pending (or Failed when its spec cannot run); one
simulation holds the slot (the Lease holder while it is still live, else the oldest
waiting one by creationTimestamp); the others wait as Blocked, naming the holder; a deleted
one is finalized. The reconciler carries the actions out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from simkube.simulation.names import FINALIZER
from simkube.simulation.spec import SpecError, parse_spec
from simkube.simulation.states import TERMINAL, State


class Action(StrEnum):
    ADD_FINALIZER = "AddFinalizer"
    SET_PENDING = "SetPending"
    FAIL_SPEC = "FailSpec"
    FINALIZE = "Finalize"
    BLOCK = "Block"
    START = "Start"
    KEEP = "Keep"  # running here already, or nothing to do


@dataclass(frozen=True, kw_only=True)
class Decision:
    name: str
    action: Action
    message: str = ""


def _meta(simulation: Mapping[str, Any]) -> Mapping[str, Any]:
    meta: Mapping[str, Any] = simulation.get("metadata") or {}
    return meta


def state_of(simulation: Mapping[str, Any]) -> str | None:
    state = (simulation.get("status") or {}).get("state")
    return str(state) if state else None


def spec_problem(simulation: Mapping[str, Any]) -> str | None:
    try:
        parse_spec(dict(simulation))
    except SpecError as exc:
        return exc.message
    return None


def order_key(simulation: Mapping[str, Any]) -> tuple[str, str]:
    meta = _meta(simulation)
    return str(meta.get("creationTimestamp") or ""), str(meta.get("name") or "")


def _alone(simulation: Mapping[str, Any]) -> Decision | None:
    """The decision that needs no other simulation, or None when it competes for the slot."""
    meta = _meta(simulation)
    name = str(meta.get("name"))
    finalizers = meta.get("finalizers") or []
    if meta.get("deletionTimestamp"):
        return Decision(name=name, action=Action.FINALIZE if FINALIZER in finalizers
                        else Action.KEEP)
    if FINALIZER not in finalizers:
        return Decision(name=name, action=Action.ADD_FINALIZER)
    state = state_of(simulation)
    if state in TERMINAL:
        return Decision(name=name, action=Action.KEEP)
    problem = spec_problem(simulation)
    if problem is not None:
        return Decision(name=name, action=Action.FAIL_SPEC, message=problem)
    if state is None:
        return Decision(name=name, action=Action.SET_PENDING)
    return None


def choose_holder(waiting: Iterable[Mapping[str, Any]], *, lease_holder: str | None,
                  active: str | None) -> str | None:
    """Who gets the slot: the one running here, else the live Lease holder, else the oldest."""
    candidates = sorted(waiting, key=order_key)
    names = [str(_meta(s).get("name")) for s in candidates]
    for preferred in (active, lease_holder):
        if preferred is not None and preferred in names:
            return preferred
    return names[0] if names else None


def plan(simulations: Iterable[Mapping[str, Any]], *, lease_holder: str | None,
         active: str | None) -> list[Decision]:
    """One decision per simulation, in creation order."""
    decisions: list[Decision] = []
    waiting: list[Mapping[str, Any]] = []
    for simulation in sorted(simulations, key=order_key):
        decision = _alone(simulation)
        if decision is None:
            waiting.append(simulation)
        else:
            decisions.append(decision)
    holder = choose_holder(waiting, lease_holder=lease_holder, active=active)
    for simulation in waiting:
        name = str(_meta(simulation).get("name"))
        if name == holder:
            decisions.append(Decision(name=name, action=Action.KEEP if name == active
                                      else Action.START))
        else:
            decisions.append(Decision(
                name=name, action=Action.BLOCK,
                message=f"waiting for simulation {holder} to finish (one runs at a time)"))
    return decisions


def needs_block_write(simulation: Mapping[str, Any], message: str) -> bool:
    """Whether Blocked with ``message`` is news (watch events of our own writes loop back)."""
    status = simulation.get("status") or {}
    return status.get("state") != State.BLOCKED or status.get("message") != message
