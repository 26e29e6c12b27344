from __future__ import annotations

import asyncio
from typing import Any

import pytest

from simkube.core.kubeapi import APPLY_PATCH, ApiError, Discovery
from simkube.driver.applying import Applier
from simkube.driver.namespaces import Namespaces
from simkube.driver.options import Placement, PodTiming
from simkube.driver.progress import Operation
from simkube.driver.rewriting import Rewriter, RootRef
from simkube.trace import TraceHeader
from tests.support.traces import config_map
from tests.unit.driver.fakes import Call, FakeKube

pytestmark = pytest.mark.unit
ROOT = RootRef(name="sim", uid="uid")


def _applier(kube: FakeKube, *, concurrency: int = 8, deadline: float = 1.0,
             **hooks: Any) -> Applier:
    rewriter = Rewriter(simulation="sim", prefix="v", root=ROOT, header=TraceHeader(),
                        placement=Placement(), timing=PodTiming())
    return Applier(kube=kube, discovery=Discovery(kube),  # type: ignore[arg-type]
                   rewriter=rewriter,
                   namespaces=Namespaces(kube, root=ROOT, simulation="sim"),  # type: ignore[arg-type]
                   concurrency=concurrency, retry_deadline_s=deadline, first_backoff_s=0.01,
                   **hooks)


def _patches(kube: FakeKube) -> list[Call]:
    return kube.made("PATCH")


async def test_server_side_apply_into_the_virtual_namespace() -> None:
    kube = FakeKube()
    started = []
    failure = await _applier(kube).apply(config_map("c", namespace="a"), offset_ms=5,
                                         started=lambda: started.append(1))
    assert failure is None
    assert started == [1]
    assert [c.path for c in kube.made("POST")] == [
        "/api/v1/namespaces", "/api/v1/namespaces/v-a/serviceaccounts"]
    (patch,) = _patches(kube)
    assert patch.path == "/api/v1/namespaces/v-a/configmaps/c"
    assert patch.query == {"fieldManager": "simkube-driver", "force": "true"}
    assert patch.content_type == APPLY_PATCH
    assert patch.body["metadata"]["namespace"] == "v-a"


async def test_transient_errors_are_retried() -> None:
    answers: list[Any] = [ApiError(code=0, reason="ServerDisconnectedError", message="x"),
                          ApiError(code=429, reason="TooManyRequests", message="slow down")]
    kube = FakeKube(answer=lambda call: answers.pop(0) if call.method == "PATCH" and answers
                    else {})
    assert await _applier(kube).apply(config_map("c"), offset_ms=0) is None
    assert len(_patches(kube)) == 3


async def test_permanent_errors_fail_at_once_with_their_reason() -> None:
    invalid = ApiError(code=422, reason="Invalid", message="spec.replicas: must be >= 0")
    kube = FakeKube(answer=lambda call: invalid if call.method == "PATCH" else {})
    failure = await _applier(kube).apply(config_map("c", namespace="a"), offset_ms=42)
    assert failure is not None
    assert (failure.code, failure.reason, failure.attempts) == (422, "Invalid", 1)
    assert failure.object == "v1.ConfigMap v-a/c"
    assert (failure.operation, failure.trace_offset_ms) == (Operation.APPLY, 42)


async def test_retries_stop_at_the_deadline() -> None:
    busy = ApiError(code=503, reason="ServiceUnavailable", message="busy")
    kube = FakeKube(answer=lambda call: busy if call.method == "PATCH" else {})
    failure = await _applier(kube, deadline=0.2).apply(config_map("c"), offset_ms=0)
    assert failure is not None
    assert failure.reason == "ServiceUnavailable"
    assert failure.attempts >= 3


async def test_forbidden_until_the_service_account_exists_is_retried() -> None:
    answers: list[Any] = [ApiError(code=403, reason="Forbidden", message=(
        'pods "p" is forbidden: error looking up service account v-a/default: '
        'serviceaccount "default" not found'))]
    kube = FakeKube(answer=lambda call: answers.pop() if call.method == "PATCH" and answers
                    else {})
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "a"},
           "spec": {"containers": [{"name": "c"}]}}
    assert await _applier(kube).apply(pod, offset_ms=0) is None


async def test_deleting_what_is_gone_is_fine() -> None:
    kube = FakeKube(answer=lambda call: ApiError(code=404, reason="NotFound", message="")
                    if call.method == "DELETE" else {})
    applier = _applier(kube)
    assert await applier.delete(config_map("c", namespace="a"), offset_ms=0) is None
    (delete,) = kube.made("DELETE")
    assert delete.path == "/api/v1/namespaces/v-a/configmaps/c"
    assert delete.body["propagationPolicy"] == "Background"
    assert not kube.made("POST")  # no namespace is created for a delete
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    assert await applier.delete(widget, offset_ms=0) is None  # kind not served: nothing to do


async def test_operations_on_one_object_keep_trace_order() -> None:
    order: list[str] = []
    attempts = {"first": 0}

    def answer(call: Call) -> Any:
        if call.method == "PATCH":
            value = call.body["data"]["v"]
            if value == "first" and attempts["first"] < 2:
                attempts["first"] += 1
                return ApiError(code=500, reason="InternalError", message="")
            order.append(value)
        if call.method == "DELETE":
            order.append("delete")
        return {}
    kube = FakeKube(answer=answer)
    applier = _applier(kube)
    await asyncio.gather(applier.apply(config_map("c", v="first"), offset_ms=0),
                         applier.apply(config_map("c", v="second"), offset_ms=1),
                         applier.delete(config_map("c"), offset_ms=2),
                         applier.apply(config_map("other", v="free"), offset_ms=1))
    assert [item for item in order if item != "free"] == ["first", "second", "delete"]
    assert order.index("free") < order.index("first")  # other objects do not wait


async def test_concurrency_is_bounded() -> None:
    kube = FakeKube(delay=0.02)
    applier = _applier(kube, concurrency=3)
    await asyncio.gather(*(applier.apply(config_map(f"c{index}"), offset_ms=0)
                           for index in range(12)))
    assert kube.max_in_flight <= 4  # three applies plus the namespace creation
    assert len(_patches(kube)) == 12


async def test_objects_that_cannot_be_rewritten_are_failures() -> None:
    broken = {"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": "b", "namespace": "a", "labels": "not-a-map"}}
    failure = await _applier(FakeKube()).apply(broken, offset_ms=0)
    assert failure is not None
    assert failure.reason == "BadObject"


async def test_a_namespace_gone_meanwhile_is_created_again() -> None:
    answers: list[Any] = [ApiError(code=404, reason="NotFound",
                                   message='namespaces "v-a" not found')]
    kube = FakeKube(answer=lambda call: answers.pop() if call.method == "PATCH" and answers
                    else {})
    assert await _applier(kube).apply(config_map("c", namespace="a"), offset_ms=0) is None
    # The namespace and its default ServiceAccount, and again after it vanished.
    assert len(kube.made("POST")) == 4


async def test_before_apply_runs_first_and_in_the_objects_order() -> None:
    order: list[str] = []

    async def before(obj: dict[str, Any], offset_ms: int) -> None:
        order.append(f"before {obj['data']['v']} at {offset_ms}")

    def answer(call: Call) -> Any:
        if call.method == "PATCH":
            order.append(f"apply {call.body['data']['v']}")
        return {}
    kube = FakeKube(answer=answer)
    applier = _applier(kube, before_apply=before)
    await asyncio.gather(applier.apply(config_map("c", v="first"), offset_ms=3),
                         applier.apply(config_map("c", v="second"), offset_ms=4))
    assert order == ["before first at 3", "apply first", "before second at 4", "apply second"]
