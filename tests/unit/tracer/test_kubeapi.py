from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from kubernetes_asyncio.client import ApiClient, Configuration

from simkube.tracer.kubeapi import ApiError, GoneError, KubeApi

pytestmark = pytest.mark.unit


async def _watch(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse()
    await response.prepare(request)
    version = request.query.get("resourceVersion")
    if version == "old":
        error = {"type": "ERROR", "object": {"kind": "Status", "code": 410,
                                             "reason": "Expired", "message": "too old"}}
        await response.write(json.dumps(error).encode() + b"\n")
        return response
    for name in ("a", "b"):
        line = {"type": "ADDED", "object": {"metadata": {"name": name}}}
        await response.write(json.dumps(line).encode() + b"\n\n")
    return response


async def _pods(request: web.Request) -> web.StreamResponse:
    if request.query.get("watch"):
        return await _watch(request)
    assert request.headers["Accept"] == "application/json"
    return web.json_response({"items": [], "metadata": {"resourceVersion": "7"}})


async def _missing(request: web.Request) -> web.Response:
    return web.json_response({"kind": "Status", "code": 404, "reason": "NotFound",
                              "message": "widgets not found"}, status=404)


async def _text(request: web.Request) -> web.Response:
    return web.Response(text="<html>")


@pytest.fixture
async def api() -> AsyncIterator[KubeApi]:
    app = web.Application()
    app.router.add_get("/api/v1/pods", _pods)
    app.router.add_get("/apis/example.com/v1", _missing)
    app.router.add_get("/text", _text)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    configuration = Configuration(host=f"http://127.0.0.1:{port}")
    async with ApiClient(configuration) as client:
        yield KubeApi(client, concurrency=2, request_timeout=5)
    await runner.cleanup()


async def test_get_watch_and_status_errors(api: KubeApi) -> None:
    assert (await api.get("/api/v1/pods"))["metadata"]["resourceVersion"] == "7"
    events = [event async for event in api.watch("/api/v1/pods", query={}, read_timeout=5)]
    assert [e["object"]["metadata"]["name"] for e in events] == ["a", "b"]
    with pytest.raises(GoneError, match="410 Expired too old") as gone:
        async for _ in api.watch("/api/v1/pods", query={"resourceVersion": "old"},
                                 read_timeout=5):
            pass
    assert gone.value.status == 410
    with pytest.raises(ApiError, match="404 NotFound widgets not found") as missing:
        await api.get("/apis/example.com/v1")
    assert missing.value.status == 404
    with pytest.raises(ApiError, match="not JSON"):
        await api.get("/text")


async def test_unreachable_servers_are_api_errors() -> None:
    async with ApiClient(Configuration(host="http://127.0.0.1:9")) as client:
        with pytest.raises(ApiError) as caught:
            await KubeApi(client, request_timeout=2).get("/api/v1")
    assert caught.value.status == 0
