from __future__ import annotations

from typing import Any

import pytest

from simkube.core.kubeapi import MERGE_PATCH, ApiError
from simkube.driver.victim_marking import VictimMarker
from simkube.driver.victims import DELETION_COST, VictimPlan
from simkube.trace import PodLifecycle, PodRun
from tests.unit.driver.fakes import Call, FakeKube

pytestmark = pytest.mark.unit
WEB = "apps/v1.Deployment shop/web"


def _deployment(replicas: int | None, *, name: str = "web") -> dict[str, Any]:
    spec: dict[str, Any] = {} if replicas is None else {"replicas": replicas}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "shop"}, "spec": spec}


def _marker(kube: FakeKube) -> VictimMarker:
    # Started at 0 and 10 s; the second went at 30 s, the first is still running.
    plan = VictimPlan([PodLifecycle(owner_kind="apps/v1.Deployment", owner="shop/web",
                                    runs=(PodRun(start_ms=0), PodRun(start_ms=10_000,
                                                                     end_ms=30_400)))],
                      start_ms=0)
    for number in range(2):
        plan.started(WEB, pod=("sim-shop", f"web-{number}"))
    return VictimMarker(kube=kube, plan=plan)  # type: ignore[arg-type]


async def test_a_scale_down_marks_the_recorded_victim_first() -> None:
    kube = FakeKube()
    marker = _marker(kube)
    await marker.before_apply(_deployment(2), 0)
    await marker.before_apply(_deployment(3), 10_000)  # up: nothing to mark
    assert kube.calls == []
    await marker.before_apply(_deployment(2), 30_000)
    (patch,) = kube.made("PATCH")
    assert patch.path == "/api/v1/namespaces/sim-shop/pods/web-1"
    assert patch.body == {"metadata": {"annotations": {DELETION_COST: "-2"}}}
    assert patch.content_type == MERGE_PATCH
    assert marker.marked == 1


async def test_objects_without_replicas_or_recorded_runs_are_left_alone() -> None:
    kube = FakeKube()
    marker = _marker(kube)
    for replicas in (3, None, 1):  # an HPA's target loses its replicas after creation
        await marker.before_apply(_deployment(replicas), 30_000)
    await marker.before_apply(_deployment(3, name="api"), 0)
    await marker.before_apply(_deployment(1, name="api"), 30_000)
    assert len(kube.made("PATCH")) == 1  # 3 -> 1 for web only
    config = {"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": "web", "namespace": "shop"}}
    await marker.before_apply(config, 30_000)
    assert len(kube.calls) == 1


async def test_a_pod_already_gone_is_fine_and_other_refusals_only_log() -> None:
    refusals = iter([ApiError(code=404, reason="NotFound", message="gone"),
                     ApiError(code=403, reason="Forbidden", message="no")])

    def answer(call: Call) -> Any:
        return next(refusals)
    for _ in range(2):
        kube = FakeKube(answer=answer)
        marker = _marker(kube)
        await marker.before_apply(_deployment(2), 0)
        await marker.before_apply(_deployment(1), 30_000)  # neither raises
        assert len(kube.made("PATCH")) == 1
        assert marker.marked == 0
