"""A thin async client for the raw Kubernetes REST API, on kubernetes_asyncio's connection.

Every service speaks to kinds it does not know in advance (traced kinds, CRDs) and wants the
JSON exactly as served, not kubernetes_asyncio's typed models (several times slower for a
5,000-node list), so requests and watches are raw: bodies are serialised once and responses
read as bytes. kubernetes_asyncio still does what it is good at: reading kubeconfigs (client
certificates, tokens, exec plugins) and holding the connection pool. An optional semaphore
caps the requests (not the watches) one client has in flight, so a burst of creates or of
kinds starting together never opens more than ``concurrency`` at once. Every failure is an
``ApiError`` (errors.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator, Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any

import aiohttp
from kubernetes_asyncio import client, config

from simkube.core.errors import ConfigError
from simkube.core.kubeapi.errors import ApiError


class ContentType(StrEnum):
    JSON = "application/json"
    MERGE_PATCH = "application/merge-patch+json"
    JSON_PATCH = "application/json-patch+json"
    APPLY_PATCH = "application/apply-patch+yaml"


JSON = ContentType.JSON
MERGE_PATCH = ContentType.MERGE_PATCH
JSON_PATCH = ContentType.JSON_PATCH
APPLY_PATCH = ContentType.APPLY_PATCH
REQUEST_TIMEOUT = 30.0
CONNECT_TIMEOUT = 10.0
MAX_WATCH_LINE = 16 * 1024 * 1024


class KubeClient:
    """One cluster connection; ``request`` returns the decoded JSON body."""

    def __init__(self, api: Any, *, concurrency: int | None = None,
                 timeout: float = REQUEST_TIMEOUT,
                 connect_timeout: float = CONNECT_TIMEOUT) -> None:
        self.api = api
        self.host: str = api.configuration.host
        self.timeout = timeout
        self._connect_timeout = connect_timeout
        self._slots = asyncio.Semaphore(concurrency) if concurrency else None
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
    async def connect(cls, *, kubeconfig: Path | None, pool_size: int = 256,
                      concurrency: int | None = None, timeout: float = REQUEST_TIMEOUT,
                      connect_timeout: float = CONNECT_TIMEOUT,
                      default_kubeconfig: bool = False) -> KubeClient:
        """From a kubeconfig file, or the pod's service account when ``kubeconfig`` is None
        (with ``default_kubeconfig``, outside a pod: ``~/.kube/config`` or $KUBECONFIG)."""
        configuration = client.Configuration()
        in_pod = bool(os.environ.get("KUBERNETES_SERVICE_HOST"))
        if kubeconfig is not None and not await asyncio.to_thread(kubeconfig.is_file):
            raise ConfigError(f"kubeconfig {kubeconfig} does not exist")
        try:
            if kubeconfig is not None:
                await config.load_kube_config(config_file=str(kubeconfig),
                                              client_configuration=configuration)
            elif default_kubeconfig and not in_pod:
                await config.load_kube_config(client_configuration=configuration)
            else:
                config.load_incluster_config(  # type: ignore[no-untyped-call]
                    client_configuration=configuration)
        except Exception as exc:  # the loaders raise many types for one problem: unusable
            where = (str(kubeconfig) if kubeconfig else "the default kubeconfig"
                     if default_kubeconfig and not in_pod else "the in-cluster service account")
            raise ConfigError(f"cannot use {where}: {exc}",
                              hint=None if kubeconfig else "pass --kubeconfig") from None
        configuration.connection_pool_maxsize = pool_size
        return cls(client.ApiClient(configuration), concurrency=concurrency, timeout=timeout,
                   connect_timeout=connect_timeout)

    async def close(self) -> None:
        await self._session.close()
        await self.api.close()

    async def _headers(self, content_type: str) -> dict[str, str]:
        headers = {"Accept": JSON, "Content-Type": content_type}
        await self.api.update_params_for_auth(headers, [], ["BearerToken"])
        return headers

    async def request(self, method: str, path: str, *, body: Any = None,
                      query: Mapping[str, str] | None = None, content_type: str = JSON,
                      timeout: float | None = None) -> dict[str, Any]:
        data = None if body is None else json.dumps(body, separators=(",", ":")).encode()
        limit = aiohttp.ClientTimeout(total=timeout or self.timeout)
        async with self._slots or contextlib.nullcontext():
            try:
                async with self._session.request(
                        method, self.host + path, params=query, data=data,
                        headers=await self._headers(content_type), timeout=limit,
                        **self._extra) as reply:
                    payload = await reply.read()
                    if not 200 <= reply.status < 300:
                        raise ApiError.from_response(reply.status, payload)
            except (aiohttp.ClientError, TimeoutError, OSError) as exc:
                raise ApiError.unanswered(f"{method} {path}", exc) from None
        if not payload:
            return {}
        try:
            result = json.loads(payload)
        except ValueError:
            raise ApiError(code=reply.status, reason="NotJSON", message=(
                f"{method} {path}: the API server sent something that is not JSON")) from None
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
                    idle_timeout: float | None = None) -> AsyncIterator[dict[str, Any]]:
        """Watch events (``{"type": ..., "object": {...}}``) until the server ends the stream.

        An ``ERROR`` event raises its Status as ``ApiError`` (``GoneError`` for 410); a
        stream silent for ``idle_timeout`` seconds (bookmarks included) is a broken one.
        """
        limit = aiohttp.ClientTimeout(total=None, sock_connect=self._connect_timeout,
                                      sock_read=idle_timeout)
        try:
            async with self._session.get(
                    self.host + path, params={**query, "watch": "true"},
                    headers=await self._headers(JSON), timeout=limit, **self._extra) as reply:
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
                            event = _event(path, line)
                            if event is not None:
                                yield event
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            raise ApiError.unanswered(f"watch {path}", exc) from None


def _event(path: str, line: bytes) -> dict[str, Any] | None:
    try:
        event = json.loads(line)
    except ValueError:
        raise ApiError(code=0, reason="BadWatchLine",
                       message=f"watch {path}: a line that is not JSON") from None
    if not isinstance(event, dict):
        return None
    if event.get("type") == "ERROR":
        status = event.get("object")
        raise ApiError.from_status(status if isinstance(status, dict) else {})
    return event
