"""Karpenter's launches and removals, from Events and NodeClaims in any order, each once."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from simkube.results.karpenter_scaling import At, KarpenterScaling
from simkube.results.model import ScalingRow
from simkube.results.nodes import NodeTracker
from tests.unit.results.karpenter_objects import (
    event,
    launched,
    node,
    node_name,
    nodeclaim,
    terminating,
)

pytestmark = pytest.mark.unit
SINCE = datetime(2026, 11, 25, 7, 0, 5, tzinfo=UTC)


def at(trace_s: float) -> At:
    return At(wall_s=trace_s / 10, trace_s=trace_s)


def rows(found: list[ScalingRow]) -> list[tuple[float, str, int, int, str]]:
    assert all(row.source == "autoscaler" for row in found)
    return [(row.trace_s, row.group, row.delta, row.nodes_after, row.reason) for row in found]


def tracked(*claims: str) -> tuple[NodeTracker, KarpenterScaling]:
    nodes = NodeTracker()
    scaling = KarpenterScaling(nodes=nodes, since=SINCE)
    for claim in claims:
        nodes.observe(node(claim))
        assert scaling.node_seen(node(claim)) == []
    return nodes, scaling


def test_a_launch_event_waits_for_its_node_and_keeps_its_time() -> None:
    nodes, scaling = tracked("simkube-old")
    assert scaling.event(launched("simkube-a"), at=at(30)) == []
    assert scaling.seen
    nodes.observe(node("simkube-other"))  # another claim's node does not end the wait
    assert scaling.node_seen(node("simkube-other")) == []
    nodes.observe(node("simkube-a"))
    assert rows(scaling.node_seen(node("simkube-a"))) == [(30, "large", 1, 3, "Launched")]
    # the same launch again (a re-listed Event, the NodeClaim): nothing new
    assert scaling.event(launched("simkube-a", uid="again"), at=at(40)) == []
    assert scaling.claim_changed(nodeclaim("simkube-a", launched_at="2026-11-25T07:00:10Z"),
                                 at=at(40)) == []


def test_a_launch_event_after_its_node_is_recorded_at_once() -> None:
    _nodes, scaling = tracked("simkube-a")  # the Node was quicker than the Event
    assert rows(scaling.event(launched("simkube-a"), at=at(12))) == [
        (12, "large", 1, 1, "Launched")]


def test_a_launched_nodeclaim_gives_the_group_before_the_node_exists() -> None:
    nodes, scaling = tracked("simkube-old")
    assert scaling.claim_changed(nodeclaim("simkube-a", group=None), at=at(10)) == []
    launch = scaling.claim_changed(nodeclaim("simkube-a", launched_at="2026-11-25T07:00:11Z"),
                                   at=at(11))
    assert rows(launch) == [(11, "large", 1, 2, "Launched")]  # one node, one on its way
    assert scaling.event(launched("simkube-a"), at=at(12)) == []
    assert rows(scaling.claim_changed(nodeclaim("simkube-b", launched_at="2026-11-25T07:00:13Z"),
                                      at=at(13))) == [(13, "large", 1, 3, "Launched")]
    nodes.observe(node("simkube-a"))  # arrived: counted once, as a node now
    assert scaling.node_seen(node("simkube-a")) == []
    assert rows(scaling.event(terminating(node_name("simkube-old"), "Empty"), at=at(14))) == [
        (14, "large", -1, 2, "Empty")]  # a and b remain (b still on its way)


def test_an_event_waiting_for_its_group_takes_it_from_the_nodeclaim() -> None:
    _nodes, scaling = tracked()
    assert scaling.event(launched("simkube-a"), at=at(20)) == []
    assert rows(scaling.claim_changed(
        nodeclaim("simkube-a", launched_at="2026-11-25T07:00:10Z"), at=at(21))) == [
        (20, "large", 1, 1, "Launched")]


def test_a_disruption_is_one_removal_whichever_witness_comes_first() -> None:
    nodes, scaling = tracked("simkube-a", "simkube-b")
    # Karpenter deletes the NodeClaim (its DisruptionReason set), then announces it.
    deleting = nodeclaim("simkube-a", launched_at="2026-11-25T07:00:01Z",
                         deleted_at="2026-11-25T07:02:00Z", disruption="Underutilized")
    assert rows(scaling.claim_changed(deleting, at=at(50))) == [
        (50, "large", -1, 1, "Underutilized")]
    assert scaling.event(terminating(node_name("simkube-a"), "Underutilized"), at=at(51)) == []
    nodes.observe(node("simkube-a"), deleted=True)
    assert scaling.claim_changed(deleting, at=at(52)) == []  # the DELETED watch event
    # Without the NodeClaim watch the Event alone says it; a node that is gone already
    # is not taken away twice from the count.
    nodes.observe(node("simkube-b"), deleted=True)
    assert rows(scaling.event(terminating(node_name("simkube-b"), "Drifted"), at=at(60))) == [
        (60, "large", -1, 0, "Drifted")]


def test_what_is_not_karpenters_decision_is_not_a_row() -> None:
    _nodes, scaling = tracked("simkube-a")
    cleared = nodeclaim("simkube-a", launched_at="2026-11-25T07:00:01Z",
                        deleted_at="2026-11-25T07:02:00Z")  # sk-ctrl clearing claims
    assert scaling.claim_changed(cleared, at=at(5)) == []
    unknown = terminating("kwok-never-seen-x-1", "Empty")
    assert scaling.event(unknown, at=at(6)) == []
    for reason, kind in (("Nominated", "Pod"), ("DisruptionBlocked", "Node"),
                         ("DisruptionLaunching", "NodeClaim"), ("Unconsolidatable", "Node")):
        assert scaling.event(event(reason, "…", kind=kind, name="x"), at=at(7)) == []
    expired = nodeclaim("simkube-a", launched_at="2026-11-25T07:00:01Z",
                        created="2026-11-25T06:00:00Z", expire_after="1h",
                        deleted_at="2026-11-25T07:00:30Z")
    assert rows(scaling.claim_changed(expired, at=at(8))) == [(8, "large", -1, 0, "Expired")]


def test_what_came_before_the_run_is_not_counted() -> None:
    _nodes, scaling = tracked("simkube-old", "simkube-going")
    listed = [nodeclaim("simkube-old", launched_at="2026-11-25T07:00:01Z"),
              nodeclaim("simkube-going", launched_at="2026-11-25T07:00:01Z",
                        deleted_at="2026-11-25T07:00:02Z", disruption="Empty"),
              nodeclaim("simkube-new", launched_at="2026-11-25T07:00:06Z"),
              nodeclaim("simkube-unlaunched", group=None)]
    assert rows(scaling.claims_listed(listed, at=at(1))) == [
        (1, "large", 1, 3, "Launched")]
    assert scaling.claim_changed(listed[0], at=at(2)) == []
    assert scaling.event(terminating(node_name("simkube-going"), "Empty"), at=at(3)) == []
    assert rows(scaling.claim_changed(nodeclaim("simkube-unlaunched",
                                                launched_at="2026-11-25T07:00:20Z"),
                                      at=at(4))) == [(4, "large", 1, 4, "Launched")]
