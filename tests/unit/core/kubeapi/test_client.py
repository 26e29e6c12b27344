from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web
from kubernetes_asyncio import client

from simkube.core.errors import ConfigError
from simkube.core.kubeapi import APPLY_PATCH, ApiError, ContentType, GoneError, KubeClient
from tests.support.serving import serving

pytestmark = pytest.mark.unit


class Server:
    def __init__(self, kube: KubeClient, seen: list[web.Request]) -> None:
        self.kube = kube
        self.seen = seen
        self.in_flight = 0
        self.most_in_flight = 0


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    seen: list[web.Request] = []

    async def apply(request: web.Request) -> web.Response:
        seen.append(request)
        body = await request.json()
        return web.json_response({"kind": "ConfigMap", "metadata": body["metadata"]})

    async def invalid(request: web.Request) -> web.Response:
        return web.json_response({"kind": "Status", "reason": "Invalid", "code": 422,
                                  "message": "spec.replicas: Invalid value: -1"}, status=422)

    async def missing(request: web.Request) -> web.Response:
        return web.json_response({"kind": "Status", "code": 404, "reason": "NotFound",
                                  "message": "widgets not found"}, status=404)

    async def broken(request: web.Request) -> web.Response:
        return web.Response(status=502, text="<html>bad gateway</html>")

    async def text(request: web.Request) -> web.Response:
        return web.Response(text="<html>")

    async def slow(request: web.Request) -> web.Response:
        state.in_flight += 1
        state.most_in_flight = max(state.most_in_flight, state.in_flight)
        await asyncio.sleep(0.05)
        state.in_flight -= 1
        return web.json_response({})

    async def watch(request: web.Request) -> web.StreamResponse:
        seen.append(request)
        response = web.StreamResponse()
        await response.prepare(request)
        if request.query.get("resourceVersion") == "old":
            error = {"type": "ERROR", "object": {"kind": "Status", "code": 410,
                                                 "reason": "Expired", "message": "too old"}}
            await response.write(json.dumps(error).encode() + b"\n")
            return response
        if request.query.get("resourceVersion") == "silent":
            await asyncio.sleep(5)
            return response
        big = {"type": "ADDED", "object": {"metadata": {"name": "x" * 100_000}}}
        payload = (json.dumps({"type": "ADDED", "object": {"metadata": {"name": "a"}}}) + "\n"
                   + json.dumps(big) + "\n\n")
        for start in range(0, len(payload), 7_000):  # lines split across chunks
            await response.write(payload[start:start + 7_000].encode())
        return response

    app = web.Application()
    app.router.add_patch("/api/v1/namespaces/a/configmaps/c", apply)
    app.router.add_get("/invalid", invalid)
    app.router.add_get("/apis/example.com/v1", missing)
    app.router.add_get("/broken", broken)
    app.router.add_get("/text", text)
    app.router.add_get("/slow", slow)
    app.router.add_get("/api/v1/pods", watch)
    async with serving(app) as url:
        kube = KubeClient(client.ApiClient(client.Configuration(host=url)), concurrency=2)
        state = Server(kube, seen)
        try:
            yield state
        finally:
            await kube.close()


async def test_requests_send_json_with_the_content_type(server: Server) -> None:
    reply = await server.kube.request("PATCH", "/api/v1/namespaces/a/configmaps/c",
                                      body={"metadata": {"name": "c"}}, content_type=APPLY_PATCH,
                                      query={"fieldManager": "m", "force": "true"})
    assert reply == {"kind": "ConfigMap", "metadata": {"name": "c"}}
    assert server.seen[0].content_type == APPLY_PATCH == ContentType.APPLY_PATCH
    assert server.seen[0].headers["Accept"] == "application/json"
    assert dict(server.seen[0].query) == {"fieldManager": "m", "force": "true"}


async def test_refusals_become_api_errors(server: Server) -> None:
    with pytest.raises(ApiError) as invalid:
        await server.kube.request("GET", "/invalid")
    assert (invalid.value.code, invalid.value.reason) == (422, "Invalid")
    assert not invalid.value.transient
    with pytest.raises(ApiError, match=r"NotFound \(404\): widgets not found") as missing:
        await server.kube.request("GET", "/apis/example.com/v1")
    assert missing.value.code == 404
    assert not await server.kube.exists("/apis/example.com/v1")
    with pytest.raises(ApiError) as broken:
        await server.kube.request("GET", "/broken")
    assert broken.value.code == 502
    assert broken.value.transient
    assert "bad gateway" in broken.value.message
    with pytest.raises(ApiError, match="not JSON"):
        await server.kube.request("GET", "/text")


async def test_requests_share_the_concurrency_slots(server: Server) -> None:
    await asyncio.gather(*(server.kube.request("GET", "/slow") for _ in range(6)))
    assert server.most_in_flight == 2


async def test_watch_reassembles_lines(server: Server) -> None:
    events = [event async for event in server.kube.watch("/api/v1/pods",
                                                         query={"labelSelector": "x"})]
    assert [len(e["object"]["metadata"]["name"]) for e in events] == [1, 100_000]
    assert server.seen[-1].query["watch"] == "true"


async def test_an_error_event_raises_its_status(server: Server) -> None:
    with pytest.raises(GoneError, match=r"Expired \(410\): too old") as gone:
        async for _ in server.kube.watch("/api/v1/pods", query={"resourceVersion": "old"}):
            pass
    assert gone.value.code == 410
    assert gone.value.gone


async def test_a_silent_watch_times_out_as_no_answer(server: Server) -> None:
    with pytest.raises(ApiError) as silent:
        async for _ in server.kube.watch("/api/v1/pods", query={"resourceVersion": "silent"},
                                         idle_timeout=0.2):
            pass
    assert silent.value.code == 0
    assert silent.value.transient
    assert "timed out" in silent.value.message


async def test_no_answer_is_transient() -> None:
    kube = KubeClient(client.ApiClient(client.Configuration(host="http://127.0.0.1:9")))
    try:
        with pytest.raises(ApiError) as caught:
            await kube.request("GET", "/api/v1", timeout=2)
        assert caught.value.code == 0
        assert caught.value.transient
        assert "GET /api/v1" in caught.value.message
    finally:
        await kube.close()


async def test_a_missing_kubeconfig_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        await KubeClient.connect(kubeconfig=tmp_path / "nope")
    bad = tmp_path / "bad"
    bad.write_text("apiVersion: v1\nkind: Config\n")
    with pytest.raises(ConfigError, match="cannot use"):
        await KubeClient.connect(kubeconfig=bad)
