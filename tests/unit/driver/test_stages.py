"""The KWOK stages are a contract with the driver: they must select on the driver's names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from simkube.cloudprov.naming import READY_AFTER_ANNOTATION
from simkube.driver.names import (
    LIFECYCLE_OWNER,
    POD_LIFETIME,
    POD_LIFETIME_MAX,
    STARTUP_DELAY,
    STARTUP_DELAY_MAX,
)

pytestmark = pytest.mark.unit
REPO = Path(__file__).resolve().parents[3]
ENV_STAGES = REPO / "services" / "simkube" / "env" / "controlplane" / "kwok-stages.yaml"


def _stages(path: Path) -> dict[str, dict[str, Any]]:
    return {doc["metadata"]["name"]: doc["spec"] for doc in yaml.safe_load_all(path.read_text())}


def _annotation(key: str) -> str:
    return f'.metadata.annotations["{key}"]'


def test_deploy_ships_the_same_stages() -> None:
    assert (REPO / "deploy" / "kwok" / "stages.yaml").read_text() == ENV_STAGES.read_text()


def test_lifetime_stage_reads_the_driver_annotations() -> None:
    stage = _stages(ENV_STAGES)["pod-lifetime-complete"]
    keys = {expression["key"]: expression["operator"]
            for expression in stage["selector"]["matchExpressions"]}
    assert keys[_annotation(POD_LIFETIME)] == "Exists"
    assert stage["delay"]["durationFrom"]["jq"]["expression"] == _annotation(POD_LIFETIME)
    assert stage["delay"]["jitterDurationFrom"]["jq"]["expression"] == _annotation(
        POD_LIFETIME_MAX)
    assert "phase: Succeeded" in stage["next"]["statusTemplate"]


def test_job_pods_the_driver_times_are_not_completed_at_once() -> None:
    stage = _stages(ENV_STAGES)["pod-job-succeeded"]
    keys = {expression["key"]: expression["operator"]
            for expression in stage["selector"]["matchExpressions"]}
    assert keys[_annotation(LIFECYCLE_OWNER)] == "DoesNotExist"
    assert "delay" not in stage


def test_startup_delay_is_read_from_the_pod() -> None:
    delay = _stages(ENV_STAGES)["pod-running"]["delay"]
    assert delay["durationFrom"]["jq"]["expression"] == _annotation(STARTUP_DELAY)
    assert delay["jitterDurationFrom"]["jq"]["expression"] == _annotation(STARTUP_DELAY_MAX)


def test_node_readiness_waits_for_the_cloud_providers_annotation() -> None:
    delay = _stages(ENV_STAGES)["node-ready"]["delay"]
    assert delay["durationFrom"]["jq"]["expression"] == _annotation(READY_AFTER_ANNOTATION)


def test_a_running_pod_marked_not_ready_is_readied_unless_it_has_a_lifetime() -> None:
    stage = _stages(ENV_STAGES)["pod-ready-again"]
    keys = {expression["key"]: (expression["operator"], expression.get("values"))
            for expression in stage["selector"]["matchExpressions"]}
    assert keys[".status.phase"] == ("In", ["Running"])
    assert keys['.status.conditions.[] | select( .type == "Ready" ) | .status'] == (
        "NotIn", ["True"])
    assert keys[_annotation(POD_LIFETIME)] == ("DoesNotExist", None)
    assert keys[".metadata.deletionTimestamp"] == ("DoesNotExist", None)
    assert "delay" not in stage
    conditions = yaml.safe_load(stage["next"]["statusTemplate"].replace(
        "{{ $now := Now }}", "").replace("{{ $now | Quote }}", "now"))["conditions"]
    assert {c["type"]: c["status"] for c in conditions} == {"Ready": "True",
                                                             "ContainersReady": "True"}
