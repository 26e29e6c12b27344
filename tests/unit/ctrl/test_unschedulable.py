"""Which pods trigger a hold: a run's pods, newly seen unschedulable, each once."""

from __future__ import annotations

from typing import Any

import pytest

from simkube.ctrl.unschedulable import (
    REJUDGE_S,
    UNBOUND_PENDING,
    UnschedulableWatch,
    unschedulable,
)
from tests.support.fake_api import FakeApi

pytestmark = pytest.mark.unit


def pod(uid: str, *, namespace: str = "virtual-shop", reason: str = "Unschedulable",
        status: str = "False", message: str = "0/3 nodes are available") -> dict[str, Any]:
    return {"metadata": {"uid": uid, "namespace": namespace, "name": uid},
            "status": {"conditions": [{"type": "PodScheduled", "status": status,
                                       "reason": reason, "message": message}]}}


def test_only_the_schedulers_unschedulable_verdict_counts() -> None:
    assert unschedulable(pod("a"))
    assert not unschedulable(pod("a", status="True", reason=""))
    assert not unschedulable(pod("a", reason="SchedulingGated"))
    assert not unschedulable({"metadata": {}, "status": {}})


def test_each_pod_triggers_once_and_only_in_the_runs_namespaces() -> None:
    fired: list[int] = []
    watch = UnschedulableWatch(kube=FakeApi(), prefix="virtual",  # type: ignore[arg-type]
                               on_new=lambda _pod: fired.append(1))
    assert watch.watch._query == {"fieldSelector": UNBOUND_PENDING}
    watch._listed([pod("a"), pod("x", namespace="default")])
    assert len(fired) == 1
    watch._listed([pod("a")])  # a re-list: nothing new
    watch._changed("MODIFIED", pod("a"))  # still the same pod
    watch._changed("ADDED", pod("y", namespace="virtualx-shop"))
    assert len(fired) == 1
    watch._changed("MODIFIED", pod("b"))
    assert len(fired) == 2
    watch._changed("DELETED", pod("b"))  # bound: out of the selector
    watch._changed("MODIFIED", pod("b"))  # unschedulable again: new again
    assert len(fired) == 3


def fresh(uid: str, *, gated: bool = False) -> dict[str, Any]:
    """A pod the scheduler has not looked at yet: no PodScheduled condition."""
    spec = {"schedulingGates": [{"name": "wait"}]} if gated else {}
    return {"metadata": {"uid": uid, "namespace": "virtual-shop", "name": uid},
            "spec": spec, "status": {"phase": "Pending"}}


def test_pods_without_a_verdict_are_awaited_until_the_scheduler_rules() -> None:
    created: list[int] = []
    unschedulable_now: list[int] = []
    watch = UnschedulableWatch(kube=FakeApi(), prefix="virtual",  # type: ignore[arg-type]
                               on_new=lambda _pod: unschedulable_now.append(1),
                               on_created=lambda: created.append(1))
    watch._changed("ADDED", fresh("a"))
    watch._changed("ADDED", fresh("b"))
    watch._changed("ADDED", fresh("g", gated=True))  # waits for its gate, not the scheduler
    assert len(created) == 2
    assert watch.awaiting()
    watch._changed("DELETED", fresh("a"))  # bound: leaves the selection
    assert watch.awaiting()
    watch._changed("MODIFIED", pod("b"))  # ruled unschedulable
    assert not watch.awaiting()
    assert len(unschedulable_now) == 1
    watch._listed([fresh("c"), pod("b")])  # a re-list: c is new, b known
    assert len(created) == 3
    assert watch.awaiting()
    assert len(unschedulable_now) == 1


class Ticks:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_node_turning_schedulable_awaits_new_verdicts_on_the_unschedulable_pods() -> None:
    ticks = Ticks()
    watch = UnschedulableWatch(kube=FakeApi(), prefix="virtual",  # type: ignore[arg-type]
                               on_new=lambda _pod: None, monotonic=ticks)
    watch._listed([pod("a"), pod("b"), pod("c")])
    assert not watch.awaiting()
    watch.rejudge()
    assert watch.awaiting()
    watch._changed("DELETED", pod("a"))  # bound to the new node
    watch._changed("MODIFIED", pod("b"))  # the same verdict word for word: not new
    watch._changed("MODIFIED", pod("c", message="0/4 nodes are available"))  # judged again
    assert watch.awaiting()  # b still
    watch._changed("MODIFIED", pod("b", message="0/4 nodes are available"))
    assert not watch.awaiting()


def test_awaiting_new_verdicts_ends_at_its_bound_and_a_relist_forgets_gone_pods() -> None:
    ticks = Ticks()
    watch = UnschedulableWatch(kube=FakeApi(), prefix="virtual",  # type: ignore[arg-type]
                               on_new=lambda _pod: None, monotonic=ticks)
    watch._listed([pod("a"), pod("b")])
    watch.rejudge()
    watch._listed([pod("b")])  # a went while disconnected; b is unchanged
    assert watch.awaiting()
    ticks.now += REJUDGE_S  # a verdict that never changes holds no longer than this
    assert not watch.awaiting()
    watch.rejudge()
    watch._listed([pod("b", message="0/4 nodes are available")])
    assert not watch.awaiting()


def test_a_relist_tells_of_pods_gone_while_the_watch_was_away() -> None:
    gone: list[str] = []
    watch = UnschedulableWatch(kube=FakeApi(), prefix="virtual",  # type: ignore[arg-type]
                               on_new=lambda _pod: None, on_gone=gone.append)
    watch._listed([pod("a"), pod("b"), fresh("c")])
    watch._listed([pod("b")])  # a was bound and c was deleted meanwhile
    assert sorted(gone) == ["a", "c"]


def test_a_relist_tells_of_any_pending_pod_gone_whatever_its_verdict() -> None:
    gone: list[str] = []
    watch = UnschedulableWatch(kube=FakeApi(), prefix="virtual",  # type: ignore[arg-type]
                               on_new=lambda _pod: None, on_gone=gone.append)
    watch._listed([])
    watch._changed("ADDED", pod("n", reason="", status="False", message="nominated"))
    watch._listed([])  # bound while the watch was away, with no Unschedulable verdict
    assert gone == ["n"]
