"""The shop's traffic spread over web's running pods: the model the replay plays back."""

from __future__ import annotations

from typing import Any

import pytest

from simkube.core.kubeapi import CLUSTER_RESOURCE_USAGES
from simkube.skctl.demo_traffic import MEMORY_PER_POD, NAME, Share, share, usage_object

pytestmark = pytest.mark.unit


def _pod(name: str, phase: str, *, deleting: bool = False) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if deleting:
        metadata["deletionTimestamp"] = "2026-11-26T10:00:00Z"
    return {"metadata": metadata, "status": {"phase": phase}}


def test_the_load_is_shared_by_running_pods_and_pending_ones_are_named_too() -> None:
    pods = [_pod("web-c", "Running"), _pod("web-a", "Running"), _pod("web-b", "Pending"),
            _pod("web-d", "Running", deleting=True)]
    assert share(load_millicores=1440, pods=pods) == Share(pods=("web-a", "web-b", "web-c"),
                                                           cpu_millicores=720)


def test_a_pod_never_reports_zero() -> None:
    assert share(load_millicores=1, pods=[_pod(f"web-{i}", "Running") for i in range(4)]) \
        .cpu_millicores == 1
    # Nothing running yet: the whole load waits for the first pod that runs.
    assert share(load_millicores=480, pods=[_pod("web-a", "Pending")]) == Share(
        pods=("web-a",), cpu_millicores=480)
    assert share(load_millicores=480, pods=[]) == Share(pods=(), cpu_millicores=480)


def test_the_usage_object_names_the_pods_and_their_share() -> None:
    obj = usage_object(namespace="shop", given=Share(pods=("web-a", "web-b"),
                                                     cpu_millicores=250))
    assert (obj["apiVersion"], obj["kind"]) == (CLUSTER_RESOURCE_USAGES.api_version,
                                                "ClusterResourceUsage")
    assert obj["metadata"] == {"name": NAME}
    assert obj["spec"]["selector"] == {"matchNamespaces": ["shop"],
                                       "matchNames": ["web-a", "web-b"]}
    assert obj["spec"]["usages"] == [{"usage": {"cpu": {"value": "250m"},
                                                "memory": {"value": str(MEMORY_PER_POD)}}}]
