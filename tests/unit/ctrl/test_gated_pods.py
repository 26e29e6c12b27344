"""The gate's book of pods: waiting, in a wave, planned, let go."""

from __future__ import annotations

from typing import Any

import pytest

from simkube.core.replay_flags import GATED_DELAY, SCALE_UP_DELAY_ANNOTATION
from simkube.ctrl.gated_pods import GatedPods, gated

pytestmark = pytest.mark.unit


def pod(uid: str, *, gate: bool = True) -> dict[str, Any]:
    annotations = {SCALE_UP_DELAY_ANNOTATION: GATED_DELAY} if gate else {}
    return {"metadata": {"uid": uid, "name": f"p-{uid}", "namespace": "shop",
                         "creationTimestamp": "2026-11-28T10:00:00Z",
                         "annotations": annotations}}


def book_with(*uids: str, at: float = 0.0, unschedulable: bool = True) -> GatedPods:
    book = GatedPods()
    for uid in uids:
        book.seen(pod(uid), at=at)
        book.waiting[uid].unschedulable = unschedulable
    return book


def test_gated_reads_the_annotation() -> None:
    assert gated(pod("a"))
    assert not gated(pod("a", gate=False))
    assert not gated({"metadata": {}})
    lifted = pod("a", gate=False)
    lifted["metadata"]["annotations"] = {SCALE_UP_DELAY_ANNOTATION: "2500ms"}
    assert not gated(lifted)  # a lifted pod's delay has an end


def test_only_gated_pods_never_seen_or_lifted_start_waiting() -> None:
    book = GatedPods()
    book.seen(pod("a"), at=1.0)
    book.seen(pod("a"), at=5.0)  # seen again: the first sighting counts
    book.seen(pod("b", gate=False), at=1.0)
    book.seen({"metadata": {"annotations": pod("c")["metadata"]["annotations"]}}, at=1.0)
    assert list(book.waiting) == ["a"]
    assert book.waiting["a"].seen_s == 1.0
    assert (book.waiting["a"].namespace, book.waiting["a"].name) == ("shop", "p-a")
    book.released.add("d")
    book.seen(pod("d"), at=2.0)  # an older event of a pod lifted since
    assert "d" not in book.waiting


def test_due_pods_wait_for_the_oldest_to_reach_the_age() -> None:
    book = book_with("a", "b", at=10.0)
    book.seen(pod("c"), at=10.0)  # not unschedulable (yet): not due
    assert book.take_due(at=11.9, age_s=2.0) == {}
    due = book.take_due(at=12.0, age_s=2.0)
    assert set(due) == {"a", "b"}
    assert set(book.waiting) == {"c"}


def test_a_wave_takes_the_due_and_every_planned_pod() -> None:
    book = book_with("a", "b")
    first = book.take_wave(book.take_due(at=3.0, age_s=2.0), at=3.0)
    assert {uid: p.planned_s for uid, p in first.items()} == {"a": 3.0, "b": 3.0}
    assert book.released == {"a", "b"}
    assert set(book.in_wave) == {"a", "b"}
    book.planned_again(["a"])
    book.gone("b")  # bound
    assert set(book.planned) == {"a"}
    assert not book.in_wave
    book.seen(pod("c"), at=4.0)
    book.waiting["c"].unschedulable = True
    second = book.take_wave(book.take_due(at=7.0, age_s=2.0), at=7.0)
    assert {uid: p.planned_s for uid, p in second.items()} == {"a": 3.0, "c": 7.0}
    assert not book.planned


def test_a_failed_lift_goes_back_where_the_pod_came_from() -> None:
    book = book_with("a", "b")
    wave = book.take_wave(book.take_due(at=3.0, age_s=2.0), at=3.0)
    book.lift_failed("a", wave["a"], relifted=False)  # first lift: waiting again
    book.lift_failed("b", wave["b"], relifted=True)  # a relift: planned again
    assert set(book.waiting) == {"a"}
    assert "a" not in book.released
    assert set(book.planned) == {"b"}
    book.lift_failed("b", wave["b"], relifted=True)  # no longer in the wave: nothing
    assert set(book.planned) == {"b"}
    assert not book.in_wave


def test_pods_planned_longer_than_a_node_takes_are_let_go() -> None:
    book = book_with("a")
    book.take_wave(book.take_due(at=3.0, age_s=2.0), at=3.0)
    book.seen(pod("b"), at=10.0)
    book.waiting["b"].unschedulable = True
    book.take_wave(book.take_due(at=20.0, age_s=2.0), at=20.0)
    assert book.let_go(["a", "b"], now=33.5, planned_for_s=30.0) == 1
    assert set(book.in_wave) == {"b"}
    book.planned_again(["a", "b"])
    assert set(book.planned) == {"b"}  # a is left lifted, out of the cycle
