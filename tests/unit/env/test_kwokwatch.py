"""The KWOK watchdog: which pods it nudges, when again, and what it counts."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from click.testing import CliRunner

from simkube.core import podstart
from simkube.core.kubeapi import ApiError
from simkube.env import kwokwatch

pytestmark = pytest.mark.unit
NOW = datetime(2026, 1, 1, 0, 1, 0, tzinfo=UTC)


def stamp(seconds_ago: float) -> str:
    return kwokwatch.rfc3339(NOW - timedelta(seconds=seconds_ago))


def pod(name: str, *, node: str = "fake-1", created_ago: float = 60.0,
        scheduled_ago: float | None = None, phase: str = "Pending",
        annotations: Mapping[str, str] | None = None, deleting: bool = False) -> dict[str, Any]:
    metadata: dict[str, Any] = {"namespace": "ns", "name": name,
                                "creationTimestamp": stamp(created_ago),
                                "annotations": dict(annotations or {})}
    if deleting:
        metadata["deletionTimestamp"] = stamp(1)
    conditions = ([] if scheduled_ago is None else [
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": stamp(scheduled_ago)}])
    return {"metadata": metadata, "spec": {"nodeName": node},
            "status": {"phase": phase, "conditions": conditions}}


def names(found: list[kwokwatch.Unstarted]) -> list[str]:
    return [p.name for p in found]


def test_pods_bound_longer_than_the_grace_are_overdue_and_the_rest_are_not() -> None:
    pods = [pod("stuck", created_ago=31), pod("young", created_ago=29),
            pod("running", phase="Running"), pod("deleting", deleting=True),
            pod("unbound", node=""),
            # Created long ago, bound by the scheduler only 10 s ago.
            pod("just-scheduled", created_ago=300, scheduled_ago=10)]
    assert names(kwokwatch.overdue(pods, now=NOW, grace_s=30)) == ["stuck"]


def test_a_pods_own_startup_delay_is_allowed_on_top_of_the_grace() -> None:
    slow = {podstart.STARTUP_DELAY: "20s", podstart.STARTUP_DELAY_MAX: "10s"}
    assert kwokwatch.overdue([pod("slow", created_ago=59, annotations=slow)],
                             now=NOW, grace_s=30) == []
    found = kwokwatch.overdue([pod("slow", created_ago=61, annotations=slow)],
                              now=NOW, grace_s=30)
    assert names(found) == ["slow"]
    assert found[0].allowed_s == 60


def test_a_nudged_pod_is_nudged_again_only_a_grace_after_its_last_nudge() -> None:
    recent = {podstart.NUDGE_ANNOTATION: stamp(10)}
    old = {podstart.NUDGE_ANNOTATION: stamp(31)}
    assert kwokwatch.overdue([pod("p", created_ago=100, annotations=recent)],
                             now=NOW, grace_s=30) == []
    assert names(kwokwatch.overdue([pod("p", created_ago=100, annotations=old)],
                                   now=NOW, grace_s=30)) == ["p"]


def test_a_pod_without_readable_times_is_left_alone() -> None:
    broken = pod("p")
    broken["metadata"]["creationTimestamp"] = "yesterday"
    assert kwokwatch.overdue([broken], now=NOW, grace_s=30) == []


class FakeKube:
    def __init__(self, *, pods: list[dict[str, Any]], nodes: Mapping[str, dict[str, Any]],
                 refuse: set[str] | None = None) -> None:
        self.pods = pods
        self.nodes = nodes
        self.refuse = refuse or set()
        self.calls: list[tuple[str, str, Any]] = []

    async def request(self, method: str, path: str, *, body: Any = None,
                      query: Mapping[str, str] | None = None, **_: Any) -> dict[str, Any]:
        self.calls.append((method, path, query or body))
        if method == "GET" and path == "/api/v1/pods":
            return {"items": self.pods, "metadata": {"resourceVersion": "7"}}
        if method == "GET" and path.startswith("/api/v1/nodes/"):
            node = self.nodes.get(path.rsplit("/", 1)[1])
            if node is None:
                raise ApiError(code=404, reason="NotFound", message="not found")
            return node
        if method == "PATCH" and path.rsplit("/", 1)[1] in self.refuse:
            raise ApiError(code=403, reason="Forbidden", message="no")
        return {}


def node(*, fake: bool) -> dict[str, Any]:
    return {"metadata": {"annotations": {"kwok.x-k8s.io/node": "fake"} if fake else {}}}


def sample(watchdog: kwokwatch.Watchdog, name: str, **labels: str) -> float:
    return watchdog.registry.get_sample_value(name, labels) or 0.0


async def test_a_sweep_nudges_overdue_pods_on_kwok_nodes_only_and_counts_them() -> None:
    kube = FakeKube(pods=[pod("on-fake", node="f1"), pod("also-on-fake", node="f1"),
                          pod("on-real", node="real"), pod("on-gone", node="gone"),
                          pod("refused", node="f1"), pod("young", node="f1", created_ago=1)],
                    nodes={"f1": node(fake=True), "real": node(fake=False)},
                    refuse={"refused"})
    watchdog = kwokwatch.Watchdog(kube=kube, grace_s=30)  # type: ignore[arg-type]
    nudged = await watchdog.sweep(now=NOW)
    assert names(nudged) == ["on-fake", "also-on-fake"]
    assert kube.calls[0] == ("GET", "/api/v1/pods",
                             {"fieldSelector": kwokwatch.PENDING_BOUND, "limit": "500"})
    patches = [call for call in kube.calls if call[0] == "PATCH"]
    assert [path for _, path, _ in patches] == [
        "/api/v1/namespaces/ns/pods/on-fake", "/api/v1/namespaces/ns/pods/also-on-fake",
        "/api/v1/namespaces/ns/pods/refused"]
    assert patches[0][2] == {"metadata": {"annotations": {
        podstart.NUDGE_ANNOTATION: kwokwatch.rfc3339(NOW)}}}
    # Each node is looked up once per sweep.
    assert [path for method, path, _ in kube.calls if method == "GET"].count(
        "/api/v1/nodes/f1") == 1
    assert sample(watchdog, "simkube_kwok_watchdog_nudges_total", outcome="nudged") == 2
    assert sample(watchdog, "simkube_kwok_watchdog_nudges_total", outcome="failed") == 1
    assert sample(watchdog, "simkube_kwok_watchdog_pending_bound_pods") == 6


async def test_a_node_lookup_the_server_refuses_fails_the_sweep() -> None:
    class Refusing(FakeKube):
        async def request(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
            if path.startswith("/api/v1/nodes/"):
                raise ApiError(code=500, reason="InternalError", message="boom")
            return await super().request(method, path, **kwargs)

    watchdog = kwokwatch.Watchdog(kube=Refusing(pods=[pod("p")], nodes={}),  # type: ignore[arg-type]
                                  grace_s=30)
    with pytest.raises(ApiError):
        await watchdog.sweep(now=NOW)


def test_the_command_refuses_a_bad_metrics_address() -> None:
    result = CliRunner().invoke(kwokwatch.command, ["--metrics-listen", "nowhere"])
    assert result.exit_code != 0
    assert "HOST:PORT" in str(result.exception or result.output)
