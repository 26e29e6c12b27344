from __future__ import annotations

import pytest

from simkube.tracer.discovery import Discovery, NotInstalledError, NotWatchableError
from simkube.tracer.kinds import parse_kind_key
from tests.unit.tracer.fakes import FakeApi

pytestmark = pytest.mark.unit


async def test_resources_are_found_and_cached() -> None:
    api = FakeApi()
    discovery = Discovery(api)  # type: ignore[arg-type]
    deployments = await discovery.resource(parse_kind_key("apps/v1.Deployment"))
    assert deployments.path(namespace="ns") == "/apis/apps/v1/namespaces/ns/deployments"
    assert deployments.path(name="x") == "/apis/apps/v1/deployments/x"
    namespaces = await discovery.resource(parse_kind_key("v1.Namespace"))
    assert namespaces.path(namespace="ignored", name="x") == "/api/v1/namespaces/x"
    await discovery.resource(parse_kind_key("apps/v1.Deployment"))
    assert [path for path, _ in api.calls] == ["/apis/apps/v1", "/api/v1"]
    discovery.forget(parse_kind_key("apps/v1.Deployment"))
    await discovery.resource(parse_kind_key("apps/v1.Deployment"))
    assert len(api.calls) == 3


async def test_missing_groups_and_kinds_are_not_installed() -> None:
    discovery = Discovery(FakeApi())  # type: ignore[arg-type]
    with pytest.raises(NotInstalledError, match=r"does not serve example\.com/v1"):
        await discovery.resource(parse_kind_key("example.com/v1.Widget"))
    with pytest.raises(NotInstalledError, match="apps/v1 has no kind Widget"):
        await discovery.resource(parse_kind_key("apps/v1.Widget"))


async def test_kinds_that_cannot_be_watched() -> None:
    api = FakeApi()
    api.discovery["/api/v1"]["resources"].append(
        {"name": "bindings", "kind": "Binding", "namespaced": True, "verbs": ["create"]})
    with pytest.raises(NotWatchableError, match="cannot be listed and watched"):
        await Discovery(api).resource(parse_kind_key("v1.Binding"))  # type: ignore[arg-type]
