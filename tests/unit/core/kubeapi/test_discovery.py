from __future__ import annotations

from typing import Any

import pytest

from simkube.core.kubeapi import (
    DEPLOYMENTS,
    PODS,
    ApiError,
    Discovery,
    KindNotServedError,
    NotWatchableError,
)
from tests.unit.core.kubeapi.fakes import ScriptedKube

pytestmark = pytest.mark.unit

WATCHABLE = ["get", "list", "watch"]
DOCUMENTS: dict[str, list[dict[str, Any]]] = {
    "/api/v1": [
        {"name": "namespaces", "kind": "Namespace", "namespaced": False, "verbs": WATCHABLE},
        {"name": "nodes", "kind": "Node", "namespaced": False, "verbs": WATCHABLE},
        {"name": "pods", "kind": "Pod", "namespaced": True, "verbs": WATCHABLE},
        {"name": "pods/status", "kind": "Pod", "namespaced": True, "verbs": ["get"]},
        {"name": "bindings", "kind": "Binding", "namespaced": True, "verbs": ["create"]}],
    "/apis/apps/v1": [
        {"name": "deployments", "kind": "Deployment", "namespaced": True, "verbs": WATCHABLE},
        {"name": "deployments/scale", "kind": "Scale", "namespaced": True, "verbs": ["get"]}],
}


def served(documents: dict[str, list[dict[str, Any]]] = DOCUMENTS) -> ScriptedKube:
    """A kube answering discovery documents from ``documents`` (404 for any other path)."""
    def answer(method: str, path: str) -> object:
        if path in documents:
            return {"resources": documents[path]}
        return ApiError(code=404, reason="NotFound", message=f"{path} not found")
    return ScriptedKube(answer=answer)


def gets(kube: ScriptedKube) -> list[str]:
    return [path for method, path, *_ in kube.requests if method == "GET"]


async def test_resources_are_discovered_once_per_group_version() -> None:
    kube = served()
    discovery = Discovery(kube)  # type: ignore[arg-type]
    deployments = await discovery.resource(api_version="apps/v1", kind="Deployment")
    assert deployments.path(name="web", namespace="a") == (
        "/apis/apps/v1/namespaces/a/deployments/web")
    assert deployments.path(namespace="ns") == "/apis/apps/v1/namespaces/ns/deployments"
    assert deployments.path(name="x") == "/apis/apps/v1/deployments/x"
    nodes = await discovery.resource(api_version="v1", kind="Node")
    assert nodes.path(name="n") == "/api/v1/nodes/n"
    namespaces = await discovery.resource(api_version="v1", kind="Namespace")
    assert namespaces.path(namespace="ignored", name="x") == "/api/v1/namespaces/x"
    pods = await discovery.resource(api_version="v1", kind="Pod")
    assert (pods.plural, pods.namespaced) == ("pods", True)  # not its status subresource
    assert (pods, deployments) == (PODS, DEPLOYMENTS)  # the resource table's own entries
    await discovery.resource(api_version="apps/v1", kind="Deployment")
    assert gets(kube) == ["/apis/apps/v1", "/api/v1"]


async def test_forgotten_kinds_are_looked_up_again_at_once() -> None:
    kube = served()
    discovery = Discovery(kube)  # type: ignore[arg-type]
    await discovery.resource(api_version="apps/v1", kind="Deployment")
    discovery.forget(api_version="apps/v1", kind="Deployment")
    await discovery.resource(api_version="apps/v1", kind="Deployment")
    assert gets(kube) == ["/apis/apps/v1", "/apis/apps/v1"]


async def test_unserved_kinds_are_transient_and_looked_up_again_later() -> None:
    kube = served()
    discovery = Discovery(kube)  # type: ignore[arg-type]
    with pytest.raises(KindNotServedError, match=r"does not serve example\.com/v1") as caught:
        await discovery.resource(api_version="example.com/v1", kind="Widget")
    assert (caught.value.code, caught.value.reason) == (404, "KindNotServed")
    assert caught.value.transient
    with pytest.raises(ApiError):
        await discovery.resource(api_version="example.com/v1", kind="Widget")
    assert gets(kube) == ["/apis/example.com/v1"]  # not asked again within a second
    with pytest.raises(KindNotServedError, match="apps/v1 has no kind Widget"):
        await discovery.resource(api_version="apps/v1", kind="Widget")
    with pytest.raises(KindNotServedError):
        await discovery.resource(api_version="apps/v1", kind="Scale")  # a subresource


async def test_a_kind_installed_later_is_found_after_the_refresh_interval() -> None:
    documents = dict(DOCUMENTS)
    kube = served(documents)
    discovery = Discovery(kube, refresh_interval=0.0)  # type: ignore[arg-type]
    with pytest.raises(KindNotServedError):
        await discovery.resource(api_version="example.com/v1", kind="Widget")
    documents["/apis/example.com/v1"] = [
        {"name": "widgets", "kind": "Widget", "namespaced": True, "verbs": WATCHABLE}]
    widgets = await discovery.resource(api_version="example.com/v1", kind="Widget")
    assert widgets.path(namespace="a") == "/apis/example.com/v1/namespaces/a/widgets"
    assert widgets.api_version == "example.com/v1"


async def test_discovery_errors_other_than_404_propagate_and_are_not_remembered() -> None:
    kube = ScriptedKube(answer=lambda method, path: ApiError(code=503, reason="Unavailable",
                                                              message=""))
    discovery = Discovery(kube)  # type: ignore[arg-type]
    for _ in range(2):
        with pytest.raises(ApiError) as caught:
            await discovery.resource(api_version="batch/v1", kind="Job")
        assert caught.value.code == 503
    assert len(gets(kube)) == 2


async def test_kinds_that_cannot_be_watched() -> None:
    discovery = Discovery(served())  # type: ignore[arg-type]
    bindings = await discovery.resource(api_version="v1", kind="Binding")
    assert bindings.plural == "bindings"
    with pytest.raises(NotWatchableError, match="cannot be listed and watched"):
        await discovery.watchable(api_version="v1", kind="Binding")
    pods = await discovery.watchable(api_version="v1", kind="Pod")
    assert pods.path() == "/api/v1/pods"
