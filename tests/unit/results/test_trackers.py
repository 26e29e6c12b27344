"""Nodes, pods and autoscaler Events observed one at a time: counts and per-pod times."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from simkube.results.autoscaler_events import AutoscalerEvents, is_autoscaler_event, parse_changes
from simkube.results.model import PodRow
from simkube.results.nodes import NodeTracker, node_group, node_maker
from simkube.results.pods import PodTracker
from tests.unit.results.objects import ca_event, node, pod

pytestmark = pytest.mark.unit
NOW = datetime(2026, 1, 1, 0, 1, tzinfo=UTC)


def trace_at(when: datetime) -> float:
    """Trace 100 now, speed 10."""
    return 100 - (NOW - when).total_seconds() * 10


def test_node_groups() -> None:
    assert node_group(node("a", group="general")) == "general"
    assert node_group(node("b")) == "static"
    assert node_group(node("c", fake=False)) is None
    assert node_group(node("d", group="general", infra=True)) is None


def test_who_made_a_node() -> None:
    karpenter = node("kwok-simkube-a-owl-1", group="large")
    karpenter["metadata"]["labels"]["karpenter.sh/nodepool"] = "simkube"
    cloudprov = node("small-1", group="small")
    cloudprov["spec"] = {"providerID": "simkube://small-1"}
    static = node("static-1")
    static["spec"] = {"providerID": "kwok://static-1"}  # KWOK's id proves nothing
    assert [node_maker(n) for n in (karpenter, cloudprov, static)] == [
        "karpenter", "cluster-autoscaler", None]
    nodes = NodeTracker()
    nodes.replace([static, cloudprov])
    # A listed sk-cloudprov node is a group's minimum, there without any autoscaler;
    # updates of it prove nothing either.
    assert nodes.makers == set()
    nodes.observe(cloudprov)
    assert nodes.makers == set()
    nodes.observe(karpenter)
    assert nodes.makers == {"karpenter"}
    added = node("small-2", group="small")
    added["spec"] = {"providerID": "simkube://small-2"}
    nodes.observe(added, added=True)  # made while the run records: CA asked for it
    assert nodes.makers == {"cluster-autoscaler", "karpenter"}
    assert nodes.node_pools() == {"large": "simkube"}
    nodes.restore(instance_types={"large": "m5.2xlarge", "gone": "m5.large"},
                  node_pools={"large": "other", "gone": ""})
    assert nodes.instance_types() == {"large": "m5.2xlarge", "gone": "m5.large"}
    assert nodes.node_pools() == {"large": "simkube"}  # what the cluster says wins


def test_node_counts_follow_adds_deletes_and_lists() -> None:
    nodes = NodeTracker()
    nodes.replace([node("a", group="g"), node("b", group="g"), node("s"), node("r", fake=False)])
    assert nodes.counts() == {"g": 2, "static": 1}
    nodes.observe(node("a", group="g"))  # MODIFIED: no double count
    nodes.observe(node("b", group="g"), deleted=True)
    nodes.observe(node("c", group="h"))
    assert nodes.counts() == {"g": 1, "static": 1, "h": 1}
    assert nodes.group_of("b") == "g"  # remembered after deletion, for its pods
    nodes.observe(node("c", group="g"))  # relabelled: moves from h to g
    nodes.observe(node("s", fake=False))  # no longer simulated capacity
    assert nodes.counts() == {"g": 2}  # no empty groups left behind
    nodes.replace([node("a", group="g")])
    assert nodes.counts() == {"g": 1}


def test_pod_times_from_watch_observations() -> None:
    nodes = NodeTracker()
    nodes.observe(node("n1", group="general"))
    pods = PodTracker(prefix="virtual", group_of=nodes.group_of)
    pods.observe(pod("p"), trace_s=10)
    pods.observe(pod("other", namespace="virtualx"), trace_s=10)  # not a virtual namespace
    pods.observe(pod("sys", namespace="kube-system"), trace_s=10)
    assert pods.counts() == {"Pending": 1, "Running": 0, "Succeeded": 0, "Failed": 0}
    pods.observe(pod("p", node_name="n1", scheduled_at="2026-01-01T00:00:00Z"), trace_s=25)
    pods.observe(pod("p", node_name="n1", phase="Running"), trace_s=26)
    assert pods.counts()["Running"] == 1
    pods.observe(pod("p", node_name="n1", phase="Succeeded"), trace_s=40)
    pods.observe(pod("p", node_name="n1", phase="Succeeded"), trace_s=41, deleted=True)
    assert pods.counts() == {"Pending": 0, "Running": 0, "Succeeded": 0, "Failed": 0}
    assert pods.rows() == [PodRow(namespace="virtual-shop", name="p", group="general",
                                  node="n1", created_trace_s=10, scheduled_trace_s=25,
                                  pending_s=15, finished_trace_s=40, phase="Succeeded")]


def test_pods_met_in_a_list_take_their_times_from_the_object() -> None:
    pods = PodTracker(prefix="virtual", group_of=lambda _: None)
    pods.replace([pod("a", node_name="n", phase="Running", created="2026-01-01T00:00:50Z",
                      scheduled_at="2026-01-01T00:00:52Z"),
                  pod("b", created="2026-01-01T00:00:55Z")], trace_s=100, trace_at=trace_at)
    rows = {r.name: r for r in pods.rows()}
    assert (rows["a"].created_trace_s, rows["a"].scheduled_trace_s, rows["a"].pending_s) == (
        0, 20, 20)
    assert (rows["b"].created_trace_s, rows["b"].pending_s) == (50, None)
    # a re-list without b: deleted while the watch was down; a is not counted twice
    pods.replace([pod("a", node_name="n", phase="Running")], trace_s=120, trace_at=trace_at)
    assert pods.counts() == {"Pending": 0, "Running": 1, "Succeeded": 0, "Failed": 0}
    assert {r.name: r.finished_trace_s for r in pods.rows()} == {"a": None, "b": 120}


def test_restored_pods_keep_their_times() -> None:
    pods = PodTracker(prefix="virtual", group_of=lambda _: "g")
    restored = [PodRow(namespace="virtual-shop", name=name, group=None, node=None,
                       created_trace_s=5.0, scheduled_trace_s=None, pending_s=None,
                       finished_trace_s=finished, phase="Pending")
                for name, finished in (("live", None), ("gone", None), ("done", 30.0))]
    pods.restore(restored)
    pods.replace([pod("live", node_name="n", created="2026-01-01T00:00:58Z",
                      scheduled_at="2026-01-01T00:00:59Z")], trace_s=100, trace_at=trace_at)
    rows = {r.name: r for r in pods.rows()}
    assert (rows["live"].created_trace_s, rows["live"].scheduled_trace_s,
            rows["live"].pending_s, rows["live"].group) == (5.0, 90, 85, "g")
    assert rows["gone"].finished_trace_s == 100
    assert rows["done"].finished_trace_s == 30.0
    assert pods.counts()["Pending"] == 1  # live: bound, but its phase is still Pending


def test_autoscaler_scale_up_messages() -> None:
    counts = {"general": 1}
    up = ca_event("e1", reason="TriggeredScaleUp",
                  message="pod triggered scale-up: [{general 1->3 (max: 5)} {big 0->1 (max: 2)}]")
    assert is_autoscaler_event(up)
    assert [(c.group, c.delta, c.nodes_after) for c in parse_changes(
        up, group_of=lambda _: None, counts=counts)] == [("general", 2, 3), ("big", 1, 1)]
    group = ca_event("e2", reason="ScaledUpGroup",
                     message="Scale-up: setting group general size to 4 instead of 3 (max: 5)")
    assert [(c.group, c.delta, c.nodes_after) for c in parse_changes(
        group, group_of=lambda _: None, counts=counts)] == [("general", 1, 4)]


def test_autoscaler_scale_down_messages() -> None:
    groups = {"n3": "general"}
    counts = {"general": 3}
    empty = ca_event("e3", reason="ScaleDownEmpty",
                     message='Scale-down: removing empty node "n3"')
    assert [(c.group, c.delta, c.nodes_after) for c in parse_changes(
        empty, group_of=groups.get, counts=counts)] == [("general", -1, 2)]
    marked = ca_event("e4", reason="ScaleDown",
                      message="marked the node as toBeDeleted/unschedulable",
                      involved={"kind": "Node", "name": "n3"})
    assert [(c.group, c.delta, c.nodes_after) for c in parse_changes(
        marked, group_of=groups.get, counts=counts)] == [("general", 0, 3)]
    unknown = ca_event("e5", reason="ScaleDown", message='removing node "zzz"')
    assert parse_changes(unknown, group_of=groups.get, counts=counts) == []
    other = ca_event("e6", reason="NotTriggerScaleUp", message="pod didn't trigger scale-up")
    assert parse_changes(other, group_of=groups.get, counts=counts) == []
    assert not is_autoscaler_event(ca_event("e7", reason="ScaleDown", message="",
                                            component="kube-scheduler"))


def test_autoscaler_events_counted_once() -> None:
    events = AutoscalerEvents(window=30)
    first = ca_event("e1", reason="TriggeredScaleUp", message="{general 1->3 (max: 5)}")
    assert events.is_new(first)
    assert not events.is_new(first)  # seen again after a re-list
    assert events.is_new(ca_event("e1", reason="TriggeredScaleUp", message="", count=2))
    changes = parse_changes(first, group_of=lambda _: None, counts={})
    assert len(events.fresh(changes, wall_s=0)) == 1
    assert events.fresh(changes, wall_s=10) == []  # another pod announcing the same scale-up
    assert len(events.fresh(changes, wall_s=45)) == 1


def test_one_decision_announced_under_two_reasons_is_one_row() -> None:
    events = AutoscalerEvents(window=30)
    triggered = parse_changes(ca_event("u1", reason="TriggeredScaleUp",
                                       message="{large 1->3 (max: 5)}"),
                              group_of=lambda _: None, counts={})
    status = parse_changes(ca_event("u2", reason="ScaledUpGroup",
                                    message="setting group large size to 3 instead of 1"),
                           group_of=lambda _: None, counts={})
    assert len(events.fresh(triggered, wall_s=0.0)) == 1
    assert events.fresh(status, wall_s=0.02) == []
    groups, counts = {"n1": "large", "n2": "large"}, {"large": 3}
    removals = [parse_changes(ca_event(f"d{i}", reason=reason, message=f'removing node "{node}"'),
                              group_of=groups.get, counts=counts)
                for i, (reason, node) in enumerate([("ScaleDownEmpty", "n1"), ("ScaleDown", "n1"),
                                                     ("ScaleDownEmpty", "n2")])]
    kept = [events.fresh(changes, wall_s=1.0) for changes in removals]
    # n1 once whichever reason announced it; n2, removed in the same loop, is its own row.
    assert [len(rows) for rows in kept] == [1, 0, 1]
