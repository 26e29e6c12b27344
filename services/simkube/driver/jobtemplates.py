"""The Job a CronJob launches, as the CronJob controller would write it, and when it is done.

Kept apart from the firing loop (``cronjobs.py``) because these are pure functions of the
objects. The Job's name is the controller's scheme (the CronJob's name and the scheduled time
in minutes since the epoch), so a firing applied twice (a retry, a driver restart) is one Job.
The scheduled time goes into ``batch.kubernetes.io/cronjob-scheduled-timestamp`` as the
controller records it.
"""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any

from simkube.driver.names import SIMULATION_LABEL
from simkube.trace import KubeObject

SCHEDULED_AT = "batch.kubernetes.io/cronjob-scheduled-timestamp"
FINISHED = ("Complete", "Failed")


def job_name(cronjob_name: str, firing: datetime) -> str:
    return f"{cronjob_name}-{int(firing.timestamp()) // 60}"


def job_from_cronjob(cronjob: KubeObject, *, firing: datetime,
                     simulation: str) -> dict[str, Any]:
    """The Job ``cronjob`` (as the simulated cluster stores it) launches at ``firing``."""
    metadata = cronjob["metadata"]
    template = (cronjob.get("spec") or {}).get("jobTemplate") or {}
    template_meta = template.get("metadata") or {}
    labels = {**(template_meta.get("labels") or {}), SIMULATION_LABEL: simulation}
    annotations = {**(template_meta.get("annotations") or {}),
                   SCHEDULED_AT: firing.isoformat()}
    owner = {"apiVersion": "batch/v1", "kind": "CronJob", "name": metadata["name"],
             "uid": metadata["uid"], "controller": True, "blockOwnerDeletion": True}
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": job_name(metadata["name"], firing),
                         "namespace": metadata["namespace"], "labels": labels,
                         "annotations": annotations, "ownerReferences": [owner]},
            "spec": copy.deepcopy(template.get("spec") or {})}


def is_active(job: KubeObject) -> bool:
    """Whether ``job`` still runs: no Complete or Failed condition is true yet."""
    conditions = (job.get("status") or {}).get("conditions") or []
    return not any(isinstance(c, dict) and c.get("type") in FINISHED
                   and c.get("status") == "True" for c in conditions)
