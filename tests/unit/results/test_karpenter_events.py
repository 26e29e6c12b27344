from __future__ import annotations

import pytest

from simkube.results.karpenter_events import (
    claim,
    claim_of_node,
    disrupted_node,
    is_karpenter_event,
    launched_claim,
)
from tests.unit.results.karpenter_objects import (
    event,
    launched,
    node,
    node_name,
    nodeclaim,
    terminating,
)
from tests.unit.results.objects import ca_event

pytestmark = pytest.mark.unit


def test_a_launch_names_its_nodeclaim_only_when_it_happened() -> None:
    assert is_karpenter_event(launched("simkube-xh88x"))
    assert not is_karpenter_event(ca_event("e", reason="ScaleDown", message=""))
    assert launched_claim(launched("simkube-xh88x")) == "simkube-xh88x"
    back = event("Launched", "Status condition transitioned, Type: Launched, Status: True -> "
                 "Unknown", kind="NodeClaim", name="simkube-xh88x")
    assert launched_claim(back) is None
    for other in (event("DisruptionLaunching", "Launching NodeClaim: Underutilized",
                        kind="NodeClaim", name="simkube-xh88x"),
                  event("Nominated", "Pod should schedule on: nodeclaim/simkube-xh88x",
                        kind="Pod", name="web-1"),
                  event("Registered", "Status condition transitioned, Type: Registered, "
                        "Status: Unknown -> True", kind="NodeClaim", name="simkube-xh88x")):
        assert launched_claim(other) is None


@pytest.mark.parametrize(("message", "why"), [
    ("Disrupting Node: Empty", "Empty"),
    ("Disrupting Node: Underutilized", "Underutilized"),
    ("Disrupting Node: Drifted", "Drifted"),
    ("something new", "Disrupted"),
])
def test_a_disruption_names_its_node_and_why(message: str, why: str) -> None:
    obj = event("DisruptionTerminating", message, kind="Node", name="kwok-n1")
    assert disrupted_node(obj) == ("kwok-n1", why)


def test_only_the_nodes_copy_of_a_disruption_counts() -> None:
    copy = event("DisruptionTerminating", "Disrupting NodeClaim: Empty", kind="NodeClaim",
                 name="simkube-xh88x")
    assert disrupted_node(copy) is None
    blocked = event("DisruptionBlocked", "Node is nominated for a pending pod", kind="Node",
                    name="kwok-n1")
    assert disrupted_node(blocked) is None
    assert disrupted_node(terminating("kwok-n1", "Empty")) == ("kwok-n1", "Empty")


def test_a_nodeclaim_before_and_after_launch() -> None:
    created = claim(nodeclaim("simkube-a", group=None))
    assert created is not None
    assert (created.launched, created.group, created.node, created.deleting) == (
        False, None, None, False)
    up = claim(nodeclaim("simkube-a", launched_at="2026-11-25T07:00:01Z"))
    assert up is not None
    assert (up.launched, up.group, up.node) == (True, "large", node_name("simkube-a"))
    assert up.launched_at is not None
    assert up.launched_at.isoformat() == "2026-11-25T07:00:01+00:00"
    assert claim({"metadata": {}}) is None


def test_why_a_nodeclaim_is_deleted() -> None:
    def why(**kwargs: str) -> str | None:
        seen = claim(nodeclaim("simkube-a", launched_at="2026-11-25T07:00:01Z", **kwargs))
        assert seen is not None
        return seen.removed_because

    assert why() is None  # not being deleted
    assert why(deleted_at="2026-11-25T07:05:00Z", disruption="Underutilized") == "Underutilized"
    assert why(deleted_at="2026-11-25T07:05:00Z") is None  # not Karpenter's decision
    # Expiry has no Event: a deletion once expireAfter has passed since creation.
    assert why(deleted_at="2026-11-25T07:10:00Z", expire_after="10m0s") == "Expired"
    assert why(deleted_at="2026-11-25T07:05:00Z", expire_after="10m") is None
    assert why(deleted_at="2026-11-25T08:00:00Z", expire_after="garbled") is None


def test_the_nodeclaim_of_a_node() -> None:
    assert claim_of_node(node("simkube-xh88x")) == "simkube-xh88x"
    unlabelled = {"metadata": {"name": node_name("simkube-xh88x")}}
    assert claim_of_node(unlabelled) is None
    assert claim_of_node(unlabelled, candidates=["simkube-x", "simkube-xh88x"]) == "simkube-xh88x"
    # The project's build names Nodes in launch order: kwok-<launch ms>-<claim>.
    ordered = {"metadata": {"name": "kwok-1795860000000-simkube-xh88x",
                            "labels": {"kubernetes.io/hostname": "simkube-xh88x"}}}
    assert claim_of_node(ordered) == "simkube-xh88x"
    unlabelled_ordered = {"metadata": {"name": "kwok-1795860000000-simkube-xh88x"}}
    assert claim_of_node(unlabelled_ordered, candidates=["simkube-xh88", "simkube-xh88x"]) == \
        "simkube-xh88x"
    assert claim_of_node({"metadata": {"name": "kwok-17958x-simkube-xh88x"}},
                         candidates=["simkube-xh88x"]) is None
    ca_node = {"metadata": {"name": "small-abc12",
                            "labels": {"kubernetes.io/hostname": "small-abc12"}}}
    assert claim_of_node(ca_node, candidates=["small"]) is None
