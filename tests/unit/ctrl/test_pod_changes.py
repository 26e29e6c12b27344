"""Which changes to a pending pod start production's CA loop."""

from __future__ import annotations

from typing import Any

import pytest

from simkube.ctrl.pod_changes import CHANGE_AGE_S, ChangeWatch

pytestmark = pytest.mark.unit


def pod(*, message: str = "", deleting: bool = False, note: str = "") -> dict[str, Any]:
    metadata: dict[str, Any] = {"uid": "u1", "annotations": {"note": note}}
    if deleting:
        metadata["deletionTimestamp"] = "2026-11-29T20:32:48Z"
    conditions = ([{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                    "message": message}] if message else [])
    return {"metadata": metadata, "status": {"conditions": conditions}}


def ruled(watch: ChangeWatch, *, at: float, message: str = "0/3 nodes are available") -> None:
    watch.rouses_ca(pod(message=message), at=at)
    watch.turned_unschedulable("u1", at=at)


def test_a_pending_pods_deletion_soon_after_its_verdict_starts_a_loop() -> None:
    watch = ChangeWatch()
    assert not watch.rouses_ca(pod(), at=0.0)  # created: no verdict yet
    ruled(watch, at=0.1)
    assert watch.rouses_ca(pod(message="0/3 nodes are available", deleting=True), at=6.0)


def test_a_new_verdict_message_starts_a_loop_and_the_same_one_does_not() -> None:
    watch = ChangeWatch()
    ruled(watch, at=1.0)
    assert not watch.rouses_ca(pod(message="0/3 nodes are available"), at=2.0)
    assert watch.rouses_ca(pod(message="0/4 nodes are available"), at=3.0)


def test_annotation_patches_and_old_verdicts_start_nothing() -> None:
    watch = ChangeWatch()
    ruled(watch, at=1.0)
    # the gate's own lift: only an annotation changes
    assert not watch.rouses_ca(pod(message="0/3 nodes are available", note="lifted"), at=4.0)
    # CA's observer ignores pods whose verdict is older than its maxPodChangeAge
    late = 1.0 + CHANGE_AGE_S + 0.5
    assert not watch.rouses_ca(pod(message="0/3 nodes are available", deleting=True), at=late)


def test_a_pod_gone_is_forgotten() -> None:
    watch = ChangeWatch()
    ruled(watch, at=1.0)
    watch.gone("u1")
    assert not watch.rouses_ca(pod(message="0/4 nodes are available"), at=2.0)
