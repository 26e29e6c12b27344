from __future__ import annotations

import pytest

from simkube.core.kubeapi import ApiError
from simkube.driver.discovery import Discovery, api_base
from tests.unit.driver.fakes import Call, FakeKube, not_found

pytestmark = pytest.mark.unit


async def test_resources_are_discovered_once() -> None:
    kube = FakeKube()
    discovery = Discovery(kube)  # type: ignore[arg-type]
    deployments = await discovery.resource(api_version="apps/v1", kind="Deployment")
    assert deployments.item(name="web", namespace="a") == (
        "/apis/apps/v1/namespaces/a/deployments/web")
    nodes = await discovery.resource(api_version="v1", kind="Node")
    assert nodes.item(name="n") == "/api/v1/nodes/n"
    await discovery.resource(api_version="apps/v1", kind="Deployment")
    assert [c.path for c in kube.made("GET")] == ["/apis/apps/v1", "/api/v1"]


async def test_unknown_kinds_are_transient_and_looked_up_again_later() -> None:
    def answer(call: Call) -> object:
        return not_found(call) if call.path == "/apis/example.com/v1" else {}
    kube = FakeKube(answer=answer)
    discovery = Discovery(kube)  # type: ignore[arg-type]
    with pytest.raises(ApiError) as caught:
        await discovery.resource(api_version="example.com/v1", kind="Widget")
    assert caught.value.reason == "KindNotServed"
    assert caught.value.transient
    with pytest.raises(ApiError):
        await discovery.resource(api_version="example.com/v1", kind="Widget")
    assert len(kube.made("GET")) == 1  # not asked again within a second
    with pytest.raises(ApiError):
        await discovery.resource(api_version="apps/v1", kind="Scale")  # a subresource


async def test_discovery_errors_other_than_404_propagate() -> None:
    kube = FakeKube(answer=lambda call: ApiError(code=503, reason="Unavailable", message=""))
    with pytest.raises(ApiError) as caught:
        await Discovery(kube).resource(api_version="batch/v1", kind="Job")  # type: ignore[arg-type]
    assert caught.value.code == 503


def test_api_base() -> None:
    assert api_base("v1") == "/api/v1"
    assert api_base("apps/v1") == "/apis/apps/v1"
