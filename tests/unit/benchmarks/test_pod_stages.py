"""Each pod's first created/bound/Running sighting, and the stages' pace and waits from them."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.pod_stages import PodStages, Stage

pytestmark = pytest.mark.unit


def pod(name: str, *, node: str = "", phase: str = "Pending") -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"nodeName": node} if node else {},
            "status": {"phase": phase}}


def test_the_first_sighting_of_each_stage_counts() -> None:
    stages = PodStages(origin=0.0)
    stages.observe(pod("a"), at=1.0)
    stages.observe(pod("a", node="n1"), at=2.0)
    stages.observe(pod("a", node="n1"), at=2.5)  # another event while still bound, not run
    stages.observe(pod("a", node="n1", phase="Running"), at=4.0)
    assert {s: stages.seen[s]["a"] for s in Stage} == {
        Stage.CREATED: 1.0, Stage.BOUND: 2.0, Stage.RUNNING: 4.0}
    assert stages.bound_pending_events == 2
    assert stages.summary(pods=1)["bound_pending_events_per_pod"] == 2.0


def test_a_pod_first_seen_running_has_reached_every_stage_then() -> None:
    stages = PodStages(origin=0.0)
    stages.observe(pod("b", node="n1", phase="Running"), at=3.0)  # e.g. after a re-watch
    assert [stages.count(s) for s in Stage] == [1, 1, 1]


def test_events_without_a_name_are_ignored() -> None:
    stages = PodStages(origin=0.0)
    stages.observe({"metadata": {}}, at=1.0)
    assert stages.count(Stage.CREATED) == 0


def test_summary_gives_marks_rates_and_waits() -> None:
    stages = PodStages(origin=100.0)
    for index in range(10):
        stages.observe(pod(f"p{index}"), at=101.0 + index)  # created 1..10 s
        stages.observe(pod(f"p{index}", node="n"), at=102.0 + index)  # bound 1 s later
    summary = stages.summary(pods=10)
    assert summary["created"] == {"pods": 10, "t10_s": 1.0, "t50_s": 5.0, "t90_s": 9.0,
                                  "t100_s": 10.0, "pods_per_s_10_90": 1.0}
    assert summary["created_to_bound_s"] == {"p50": 1.0, "p90": 1.0, "p99": 1.0, "p100": 1.0}
    # Nobody ran: the marks say so rather than inventing a figure.
    assert summary["running"]["pods"] == 0
    assert summary["running"]["t50_s"] is None
    assert summary["running"]["pods_per_s_10_90"] is None
    assert summary["bound_to_running_s"]["p50"] is None


def test_marks_past_the_pods_seen_are_none() -> None:
    stages = PodStages(origin=0.0)
    for index in range(5):
        stages.observe(pod(f"p{index}"), at=float(index + 1))
    marks = stages.summary(pods=10)["created"]
    assert marks["t50_s"] == 5.0
    assert marks["t90_s"] is None
