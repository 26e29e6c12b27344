from __future__ import annotations

from typing import Any

import pytest

from simkube.results.karpenter_events import (
    PendingLaunches,
    disruption,
    is_karpenter_event,
    launched_claim,
)

pytestmark = pytest.mark.unit


def event(reason: str, message: str, *, kind: str, name: str) -> dict[str, Any]:
    # As Karpenter 1.13 records them (seen in a local environment's Events).
    return {"metadata": {"uid": f"{reason}-{name}"}, "reason": reason, "message": message,
            "source": {"component": "karpenter"},
            "involvedObject": {"kind": kind, "name": name}}


LAUNCHED = event("Launched", "Status condition transitioned, Type: Launched, Status: Unknown "
                 "-> True, Reason: Launched", kind="NodeClaim", name="simkube-xh88x")


def test_a_launch_names_its_nodeclaim_only_when_it_happened() -> None:
    assert is_karpenter_event(LAUNCHED)
    assert launched_claim(LAUNCHED) == "simkube-xh88x"
    back = event("Launched", "Status condition transitioned, Type: Launched, Status: True -> "
                 "Unknown", kind="NodeClaim", name="simkube-xh88x")
    assert launched_claim(back) is None
    assert launched_claim(event("DisruptionLaunching", "Launching NodeClaim: Underutilized",
                                kind="NodeClaim", name="simkube-xh88x")) is None


def test_a_launch_waits_for_its_node_and_keeps_its_own_time() -> None:
    pending = PendingLaunches()
    pending.add("simkube-xh88x", wall_s=3.0, trace_s=30.0)
    assert pending.arrived("kwok-simkube-other-owl-1-abc-1") is None
    launch = pending.arrived("kwok-simkube-xh88x-roachscratch-1-8ogehg93ye-1067793287")
    assert launch is not None
    assert (launch.claim, launch.wall_s, launch.trace_s) == ("simkube-xh88x", 3.0, 30.0)
    assert pending.arrived("kwok-simkube-xh88x-roachscratch-1-8ogehg93ye-1067793287") is None


@pytest.mark.parametrize(("message", "why"), [
    ("Disrupting Node: Empty", "Empty"),
    ("Disrupting Node: Underutilized/Replace", "Underutilized"),
    ("Disrupting Node: Drifted", "Drifted"),
    ("something new", "Disrupted"),
])
def test_a_disruption_of_a_node_is_a_scale_down_with_its_reason(message: str, why: str) -> None:
    changes = disruption(event("DisruptionTerminating", message, kind="Node", name="kwok-n1"),
                         group_of={"kwok-n1": "large"}.get, counts={"large": 3})
    assert [(c.reason, c.group, c.delta, c.nodes_after, c.node) for c in changes] == [
        (why, "large", -1, 2, "kwok-n1")]


def test_the_nodeclaim_copy_of_a_disruption_and_unknown_nodes_are_not_counted() -> None:
    copy = event("DisruptionTerminating", "Disrupting NodeClaim: Empty", kind="NodeClaim",
                 name="simkube-xh88x")
    assert disruption(copy, group_of=lambda _n: "large", counts={}) == []
    unknown = event("DisruptionTerminating", "Disrupting Node: Empty", kind="Node", name="x")
    assert disruption(unknown, group_of=lambda _n: None, counts={}) == []
