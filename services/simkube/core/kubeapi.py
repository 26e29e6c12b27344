"""A thin async client for the raw Kubernetes REST API, on kubernetes_asyncio's connection.

The driver speaks to kinds it learns from traces, so it needs the dynamic shape of the API
(paths, server-side apply, watches) rather than typed models, and it sends thousands of
requests a second, so it serialises bodies once and reads responses as bytes. kubernetes_asyncio
still does what it is good at: reading kubeconfigs (client certificates, tokens, exec
plugins) and holding the aiohttp session. Every failure becomes an ``ApiError`` that says
whether retrying can help.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import aiohttp
from kubernetes_asyncio import client, config

from simkube.core.errors import ConfigError

JSON = "application/json"
APPLY_PATCH = "application/apply-patch+yaml"
MERGE_PATCH = "application/merge-patch+json"
REQUEST_TIMEOUT = 30.0
MAX_WATCH_LINE = 16 * 1024 * 1024
# 429 and the 5xx a busy or restarting API server answers; 0 is "no answer at all".
TRANSIENT_CODES = frozenset({0, 429, 500, 502, 503, 504})
# Forbidden, but only until a controller catches up: a new namespace's default
# ServiceAccount, or content arriving while a deleted namespace of the same name drains.
TRANSIENT_FORBIDDEN = ("serviceaccount", "service account", "is being terminated")


class ApiError(Exception):
    """A request the API server refused or never answered (``code`` 0)."""

    def __init__(self, *, code: int, reason: str, message: str,
                 retry: bool | None = None) -> None:
        super().__init__(f"{reason} ({code}): {message}" if code else f"{reason}: {message}")
        self.code = code
        self.reason = reason
        self.message = message
        self._retry = retry

    @property
    def transient(self) -> bool:
        """Whether the same request may succeed later; decided by the code unless set."""
        if self._retry is not None:
            return self._retry
        if self.code in TRANSIENT_CODES:
            return True
        lowered = self.message.lower()
        return self.code == 403 and any(words in lowered for words in TRANSIENT_FORBIDDEN)

    @classmethod
    def from_response(cls, code: int, body: bytes) -> ApiError:
        try:
            status = json.loads(body)
        except ValueError:
            status = None
        if isinstance(status, dict) and status.get("kind") == "Status":
            return cls(code=code, reason=str(status.get("reason") or "Unknown"),
                       message=str(status.get("message") or "")[:1000])
        return cls(code=code, reason="HTTP error", message=body[:300].decode("utf-8", "replace"))


class KubeClient:
    """One cluster connection; ``request`` returns the decoded JSON body."""

    def __init__(self, api: Any) -> None:
        self._api = api
        self.host: str = api.configuration.host
        rest = api.rest_client
        # Our own session on kubernetes_asyncio's connector (its TLS and pool settings):
        # theirs trusts the environment, which costs two thread hops per request for proxy
        # and netrc lookups. A kubeconfig's proxy-url is still honoured.
        self._session = aiohttp.ClientSession(connector=rest.pool_manager.connector,
                                              connector_owner=False, trust_env=False)
        self._extra: dict[str, Any] = {}
        if getattr(rest, "proxy", None):
            self._extra["proxy"] = rest.proxy
            if getattr(rest, "proxy_headers", None):
                self._extra["proxy_headers"] = rest.proxy_headers
        if getattr(rest, "server_hostname", None):
            self._extra["server_hostname"] = rest.server_hostname

    @classmethod
    async def connect(cls, *, kubeconfig: Path | None, pool_size: int = 256) -> KubeClient:
        """From a kubeconfig file, or the pod's service account when ``kubeconfig`` is None."""
        configuration = client.Configuration()
        try:
            if kubeconfig is None:
                config.load_incluster_config(  # type: ignore[no-untyped-call]
                    client_configuration=configuration)
            else:
                if not await asyncio.to_thread(kubeconfig.is_file):
                    raise ConfigError(f"kubeconfig {kubeconfig} does not exist")
                await config.load_kube_config(config_file=str(kubeconfig),
                                              client_configuration=configuration)
        except config.ConfigException as exc:
            where = "the in-cluster service account" if kubeconfig is None else str(kubeconfig)
            raise ConfigError(f"cannot use {where}: {exc}",
                              hint=None if kubeconfig else "pass --kubeconfig") from None
        configuration.connection_pool_maxsize = pool_size
        return cls(client.ApiClient(configuration))

    async def close(self) -> None:
        await self._session.close()
        await self._api.close()

    async def _headers(self, content_type: str) -> dict[str, str]:
        headers = {"Accept": JSON, "Content-Type": content_type}
        await self._api.update_params_for_auth(headers, [], ["BearerToken"])
        return headers

    async def request(self, method: str, path: str, *, body: Any = None,
                      query: Mapping[str, str] | None = None, content_type: str = JSON,
                      timeout: float = REQUEST_TIMEOUT) -> dict[str, Any]:
        data = None if body is None else json.dumps(body, separators=(",", ":")).encode()
        try:
            async with self._session.request(
                    method, self.host + path, params=query, data=data,
                    headers=await self._headers(content_type),
                    timeout=aiohttp.ClientTimeout(total=timeout), **self._extra) as reply:
                payload = await reply.read()
                if not 200 <= reply.status < 300:
                    raise ApiError.from_response(reply.status, payload)
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            raise ApiError(code=0, reason=type(exc).__name__,
                           message=str(exc) or "no response from the API server") from None
        if not payload:
            return {}
        result = json.loads(payload)
        return result if isinstance(result, dict) else {"items": result}

    async def exists(self, path: str) -> bool:
        """Whether GET ``path`` finds something (404: no); other refusals raise."""
        try:
            await self.request("GET", path)
        except ApiError as exc:
            if exc.code == 404:
                return False
            raise
        return True

    async def watch(self, path: str, *, query: Mapping[str, str],
                    ) -> AsyncIterator[dict[str, Any]]:
        """Watch events (``{"type": ..., "object": ...}``) until the server ends the stream."""
        params = {**query, "watch": "true"}
        try:
            async with self._session.get(
                    self.host + path, params=params, headers=await self._headers(JSON),
                    timeout=aiohttp.ClientTimeout(total=None, sock_connect=10),
                    **self._extra) as reply:
                if reply.status != 200:
                    raise ApiError.from_response(reply.status, await reply.read())
                buffer = b""
                async for chunk in reply.content.iter_any():
                    buffer += chunk
                    if len(buffer) > MAX_WATCH_LINE:
                        raise ApiError(code=0, reason="WatchLineTooLong",
                                       message=f"a watch event exceeded {MAX_WATCH_LINE} bytes")
                    *lines, buffer = buffer.split(b"\n")
                    for line in lines:
                        if line.strip():
                            yield json.loads(line)
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            raise ApiError(code=0, reason=type(exc).__name__,
                           message=str(exc) or "the watch connection broke") from None


async def poll(probe: Any, *, timeout: float, interval: float = 0.1) -> bool:
    """Await ``probe()`` until it is truthy or ``timeout`` seconds pass; True if it became so."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        if await probe():
            return True
        if loop.time() >= deadline:
            return False
        await asyncio.sleep(interval)


async def delete_namespace(kube: KubeClient, name: str, *, timeout: float) -> None:
    """Delete namespace ``name`` and wait until it is gone (its pods' capacity is free again);
    ``TimeoutError`` naming it otherwise."""
    path = f"/api/v1/namespaces/{name}"
    await kube.request("DELETE", path)

    async def gone() -> bool:
        return not await kube.exists(path)
    if not await poll(gone, timeout=timeout, interval=0.3):
        raise TimeoutError(f"namespace {name} was not deleted within {timeout:.0f}s")
