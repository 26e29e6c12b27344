from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web
from kubernetes_asyncio import client

from simkube.core.errors import ConfigError
from simkube.core.kubeapi import APPLY_PATCH, ApiError, KubeClient
from tests.unit.driver.fakes import serving

pytestmark = pytest.mark.unit


@pytest.fixture
async def server() -> AsyncIterator[tuple[KubeClient, list[web.Request]]]:
    seen: list[web.Request] = []

    async def apply(request: web.Request) -> web.Response:
        seen.append(request)
        body = await request.json()
        return web.json_response({"kind": "ConfigMap", "metadata": body["metadata"]})

    async def invalid(request: web.Request) -> web.Response:
        return web.json_response({"kind": "Status", "reason": "Invalid", "code": 422,
                                  "message": "spec.replicas: Invalid value: -1"}, status=422)

    async def broken(request: web.Request) -> web.Response:
        return web.Response(status=502, text="<html>bad gateway</html>")

    async def watch(request: web.Request) -> web.StreamResponse:
        seen.append(request)
        response = web.StreamResponse()
        await response.prepare(request)
        big = {"type": "ADDED", "object": {"metadata": {"name": "x" * 100_000}}}
        payload = (json.dumps({"type": "ADDED", "object": {"metadata": {"name": "a"}}}) + "\n"
                   + json.dumps(big) + "\n\n")
        for start in range(0, len(payload), 7_000):  # lines split across chunks
            await response.write(payload[start:start + 7_000].encode())
        return response

    app = web.Application()
    app.router.add_patch("/api/v1/namespaces/a/configmaps/c", apply)
    app.router.add_get("/invalid", invalid)
    app.router.add_get("/broken", broken)
    app.router.add_get("/api/v1/pods", watch)
    async with serving(app) as url:
        kube = KubeClient(client.ApiClient(client.Configuration(host=url)))
        try:
            yield kube, seen
        finally:
            await kube.close()


async def test_requests_send_json_with_the_content_type(
        server: tuple[KubeClient, list[web.Request]]) -> None:
    kube, seen = server
    reply = await kube.request("PATCH", "/api/v1/namespaces/a/configmaps/c",
                               body={"metadata": {"name": "c"}}, content_type=APPLY_PATCH,
                               query={"fieldManager": "m", "force": "true"})
    assert reply == {"kind": "ConfigMap", "metadata": {"name": "c"}}
    assert seen[0].content_type == APPLY_PATCH
    assert dict(seen[0].query) == {"fieldManager": "m", "force": "true"}


async def test_refusals_become_api_errors(server: tuple[KubeClient, list[web.Request]]) -> None:
    kube, _ = server
    with pytest.raises(ApiError) as invalid:
        await kube.request("GET", "/invalid")
    assert (invalid.value.code, invalid.value.reason) == (422, "Invalid")
    assert not invalid.value.transient
    with pytest.raises(ApiError) as broken:
        await kube.request("GET", "/broken")
    assert broken.value.code == 502
    assert broken.value.transient
    assert "bad gateway" in broken.value.message


async def test_watch_reassembles_lines(server: tuple[KubeClient, list[web.Request]]) -> None:
    kube, seen = server
    events = [event async for event in kube.watch("/api/v1/pods", query={"labelSelector": "x"})]
    assert [len(e["object"]["metadata"]["name"]) for e in events] == [1, 100_000]
    assert seen[-1].query["watch"] == "true"


async def test_no_answer_is_transient() -> None:
    kube = KubeClient(client.ApiClient(client.Configuration(host="http://127.0.0.1:9")))
    try:
        with pytest.raises(ApiError) as caught:
            await kube.request("GET", "/api/v1", timeout=2)
        assert caught.value.code == 0
        assert caught.value.transient
    finally:
        await kube.close()


@pytest.mark.parametrize(("code", "message", "transient"), [
    (403, "forbidden: error looking up service account a/default", True),
    (403, 'unable to create new content in namespace x because it is being terminated', True),
    (403, "User cannot create resource", False), (429, "", True), (409, "", False)])
def test_transient_classification(code: int, message: str, transient: bool) -> None:
    assert ApiError(code=code, reason="r", message=message).transient is transient


def test_status_bodies_are_read() -> None:
    error = ApiError.from_response(404, b'{"kind":"Status","reason":"NotFound","message":"gone"}')
    assert (error.reason, error.message) == ("NotFound", "gone")
    assert str(error) == "NotFound (404): gone"


async def test_a_missing_kubeconfig_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        await KubeClient.connect(kubeconfig=tmp_path / "nope")
    bad = tmp_path / "bad"
    bad.write_text("apiVersion: v1\nkind: Config\n")
    with pytest.raises(ConfigError, match="cannot use"):
        await KubeClient.connect(kubeconfig=bad)
