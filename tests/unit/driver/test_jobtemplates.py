"""The Job a fired CronJob launches, and when a Job counts as active."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from simkube.driver.jobtemplates import SCHEDULED_AT, is_active, job_from_cronjob, job_name
from simkube.driver.names import SIMULATION_LABEL

pytestmark = pytest.mark.unit

FIRING = datetime(2025, 3, 29, 22, 21, tzinfo=UTC)
CRONJOB = {"apiVersion": "batch/v1", "kind": "CronJob",
           "metadata": {"name": "hello", "namespace": "v-default", "uid": "u-1"},
           "spec": {"schedule": "* * * * *", "suspend": True, "jobTemplate": {
               "metadata": {"labels": {"team": "a"}, "annotations": {"note": "x"}},
               "spec": {"backoffLimit": 2, "template": {"spec": {"containers": []}}}}}}


def test_the_name_is_the_cronjob_and_the_minute_since_the_epoch() -> None:
    assert job_name("hello", FIRING) == f"hello-{int(FIRING.timestamp()) // 60}"
    assert job_name("hello", FIRING) == "hello-29054781"


def test_the_job_is_the_template_owned_by_the_cronjob() -> None:
    job = job_from_cronjob(CRONJOB, firing=FIRING, simulation="sim")
    assert job["metadata"] == {
        "name": "hello-29054781", "namespace": "v-default",
        "labels": {"team": "a", SIMULATION_LABEL: "sim"},
        "annotations": {"note": "x", SCHEDULED_AT: "2025-03-29T22:21:00+00:00"},
        "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob", "name": "hello",
                             "uid": "u-1", "controller": True, "blockOwnerDeletion": True}]}
    assert job["spec"] == CRONJOB["spec"]["jobTemplate"]["spec"]  # type: ignore[index]
    job["spec"]["backoffLimit"] = 9
    assert CRONJOB["spec"]["jobTemplate"]["spec"]["backoffLimit"] == 2  # type: ignore[index]


def test_a_template_without_metadata_still_gets_the_simulation_label() -> None:
    bare = {**CRONJOB, "spec": {"jobTemplate": {"spec": {}}}}
    job = job_from_cronjob(bare, firing=FIRING, simulation="sim")
    assert job["metadata"]["labels"] == {SIMULATION_LABEL: "sim"}
    assert job["spec"] == {}


@pytest.mark.parametrize(("status", "active"), [
    ({}, True),
    ({"active": 1}, True),
    ({"conditions": [{"type": "Complete", "status": "True"}]}, False),
    ({"conditions": [{"type": "Failed", "status": "True"}]}, False),
    ({"conditions": [{"type": "Complete", "status": "False"}]}, True),
    ({"conditions": [{"type": "SuccessCriteriaMet", "status": "True"}]}, True),
])
def test_active_until_complete_or_failed(status: dict[str, object], active: bool) -> None:
    assert is_active({"status": status}) is active
