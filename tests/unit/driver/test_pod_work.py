from __future__ import annotations

from typing import Any

import pytest

from simkube.driver.pod_work import PodWork
from simkube.trace import KubeObject, ObjectRef

pytestmark = pytest.mark.unit


def workload(kind: str, name: str = "web", *, api_version: str = "apps/v1",
             **spec: Any) -> KubeObject:
    return {"apiVersion": api_version, "kind": kind,
            "metadata": {"namespace": "shop", "name": name}, "spec": spec}


def test_a_scaled_kind_makes_pods_when_created_with_replicas_or_scaled_up() -> None:
    work = PodWork(hold=lambda: None)
    assert work.makes_pods(workload("Deployment", replicas=2))
    assert not work.makes_pods(workload("Deployment", replicas=2))  # unchanged
    assert not work.makes_pods(workload("Deployment", replicas=1))  # scaled down
    assert work.makes_pods(workload("Deployment", replicas=3))
    assert not work.makes_pods(workload("StatefulSet", "db", replicas=0))
    assert work.makes_pods(workload("ReplicaSet", "rs"))  # replicas unset: the default 1


def test_a_created_kind_makes_pods_once_until_deleted() -> None:
    work = PodWork(hold=lambda: None)
    job = workload("Job", "batch", api_version="batch/v1", parallelism=4)
    pod = workload("Pod", "bare", api_version="v1")
    assert work.makes_pods(job)
    assert work.makes_pods(pod)
    assert not work.makes_pods(job)
    assert not work.makes_pods(pod)
    work.deleted(ObjectRef.of(job))
    assert work.makes_pods(job)
    assert work.makes_pods(workload("DaemonSet", "agent"))


def test_other_kinds_make_no_pods() -> None:
    work = PodWork(hold=lambda: None)
    assert not work.makes_pods(workload("ConfigMap", api_version="v1"))
    assert not work.makes_pods(workload("Deployment", api_version="extensions/v1beta1"))


async def test_before_apply_holds_only_for_work_that_makes_pods() -> None:
    held: list[int] = []
    work = PodWork(hold=lambda: held.append(1))
    await work.before_apply(workload("Deployment", replicas=1), 0)
    await work.before_apply(workload("Deployment", replicas=1), 10)
    await work.before_apply(workload("Service", api_version="v1"), 20)
    assert (len(held), work.holds) == (1, 1)


def test_a_new_template_makes_pods_and_a_suspended_job_none() -> None:
    work = PodWork(hold=lambda: None)
    assert work.makes_pods(workload("Deployment", replicas=2, template={"image": "v1"}))
    assert work.makes_pods(workload("Deployment", replicas=2, template={"image": "v2"}))
    assert not work.makes_pods(workload("Deployment", replicas=2, template={"image": "v2"}))
    assert not work.makes_pods(workload("Deployment", replicas=0, template={"image": "v3"}))
    assert not work.makes_pods(workload("Job", "queued", api_version="batch/v1", suspend=True))
