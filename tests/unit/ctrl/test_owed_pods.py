"""Which workloads hold the clock while their controllers make pods, and for how long."""

from __future__ import annotations

from typing import Any

import pytest

from simkube.ctrl.owed_pods import OWED_FOR_S, OwedPodsWatch, owes_pods
from tests.support.fake_api import FakeApi

pytestmark = pytest.mark.unit


def replica_set(uid: str = "rs", *, wanted: int = 3, made: int = 3, generation: int = 2,
                observed: int | None = 2, namespace: str = "virtual-shop") -> dict[str, Any]:
    status: dict[str, Any] = {"replicas": made}
    if observed is not None:
        status["observedGeneration"] = observed
    return {"metadata": {"uid": uid, "namespace": namespace, "generation": generation},
            "spec": {"replicas": wanted}, "status": status}


def job(*, parallelism: int | None = 2, completions: int | None = 4, active: int = 0,
        succeeded: int = 0, started: bool = True, suspend: bool = False,
        finished: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"suspend": suspend}
    if parallelism is not None:
        spec["parallelism"] = parallelism
    if completions is not None:
        spec["completions"] = completions
    status: dict[str, Any] = {"active": active, "succeeded": succeeded}
    if started:
        status["startTime"] = "2026-11-27T03:00:00Z"
    if finished:
        status["conditions"] = [{"type": finished, "status": "True"}]
    return {"metadata": {"uid": "j", "namespace": "virtual-shop"}, "spec": spec,
            "status": status}


def test_a_replica_set_owes_pods_until_it_has_made_them_all() -> None:
    assert not owes_pods("ReplicaSet", replica_set())
    assert owes_pods("ReplicaSet", replica_set(made=1))
    assert not owes_pods("ReplicaSet", replica_set(wanted=1, made=3))  # scaling down
    assert owes_pods("ReplicaSet", replica_set(observed=1))  # its change not yet seen
    assert owes_pods("ReplicaSet", replica_set(observed=None))  # just created


def test_a_deployment_owes_pods_until_its_replica_sets_have_them_all() -> None:
    assert owes_pods("Deployment", replica_set(observed=1))
    assert owes_pods("Deployment", replica_set(made=2))
    assert not owes_pods("Deployment", replica_set(made=4))  # a rollout's surge


def test_a_job_owes_the_pods_its_parallelism_asks_for_within_what_is_left() -> None:
    assert owes_pods("Job", job(started=False))
    assert owes_pods("Job", job(active=1))
    assert not owes_pods("Job", job(active=2))
    assert not owes_pods("Job", job(active=1, succeeded=3))  # one completion left, one active
    assert owes_pods("Job", job(parallelism=None, completions=None))  # one pod by default
    assert not owes_pods("Job", job(completions=None, active=0, succeeded=1))  # a work queue
    assert not owes_pods("Job", job(suspend=True))
    assert not owes_pods("Job", job(finished="Complete"))
    assert not owes_pods("Job", job(finished="Failed"))


class Ticks:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


def test_owing_starts_a_hold_once_and_lasts_until_the_pods_exist_or_the_bound() -> None:
    fired: list[int] = []
    now = Ticks()
    watch = OwedPodsWatch(kube=FakeApi(), prefix="virtual",  # type: ignore[arg-type]
                          on_owed=lambda: fired.append(1), monotonic=now)
    watch._listed("ReplicaSet", [replica_set(), replica_set("x", made=0, namespace="default")])
    assert not watch.owing()
    assert fired == []
    watch._changed("ReplicaSet", "MODIFIED", replica_set(wanted=5, observed=1, generation=2))
    assert watch.owing()
    assert fired == [1]
    watch._changed("ReplicaSet", "MODIFIED", replica_set(wanted=5, made=2))  # one batch made
    assert watch.owing()
    assert fired == [1]  # the same stretch: no new trigger
    watch._changed("ReplicaSet", "MODIFIED", replica_set(wanted=5, made=5))
    assert not watch.owing()
    watch._changed("ReplicaSet", "MODIFIED", replica_set(wanted=9, made=5))
    assert fired == [1, 1]
    now.now += OWED_FOR_S  # its controller is refused or backing off: let it go
    assert not watch.owing()


def test_a_relist_forgets_what_went_away_of_its_own_kind_only() -> None:
    watch = OwedPodsWatch(kube=FakeApi(), prefix="virtual",  # type: ignore[arg-type]
                          on_owed=lambda: None)
    watch._listed("ReplicaSet", [replica_set(made=0)])
    watch._listed("Job", [job(started=False)])
    watch._listed("ReplicaSet", [])
    assert watch.owing()  # the Job still owes
    watch._changed("Job", "DELETED", job(started=False))
    assert not watch.owing()
