"""The Kubernetes API calls sk-cloudprov makes, as raw JSON over kubernetes_asyncio's session.

sk-cloudprov lists and watches thousands of Nodes and pods and needs only a few fields of
each, so it reads JSON dicts instead of building kubernetes_asyncio's typed models (several
times slower for a 5,000-node list). kubernetes_asyncio still reads the kubeconfig (client
certificates, tokens, exec plugins) and owns the connection pool. Requests share a semaphore
so a burst of Node creations never opens more than ``concurrency`` requests at once.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any

import aiohttp
from kubernetes_asyncio import client, config

from simkube.core.errors import ConfigError


class ContentType(StrEnum):
    JSON = "application/json"
    MERGE_PATCH = "application/merge-patch+json"
    JSON_PATCH = "application/json-patch+json"


class KubeError(Exception):
    """The API server refused a request, or never answered it (``code`` 0)."""

    def __init__(self, *, code: int, reason: str, message: str) -> None:
        super().__init__(f"{reason} ({code}): {message}" if code else f"{reason}: {message}")
        self.code = code
        self.reason = reason
        self.message = message


class KubeApi:
    def __init__(self, api: client.ApiClient, *, concurrency: int = 64,
                 timeout: float = 30.0) -> None:
        self.api = api
        self.host = str(api.configuration.host)
        self._slots = asyncio.Semaphore(concurrency)
        self._timeout = timeout

    @classmethod
    async def connect(cls, *, kubeconfig: Path | None) -> KubeApi:
        """From a kubeconfig file, or the pod's service account when ``kubeconfig`` is None.

        kubernetes_asyncio's pool (100 connections) exceeds ``concurrency``, so requests wait
        on our semaphore, where they are counted, rather than inside aiohttp.
        """
        where = f"kubeconfig {kubeconfig}" if kubeconfig else "the in-cluster service account"
        if kubeconfig is not None and not await asyncio.to_thread(kubeconfig.is_file):
            raise ConfigError(f"{where} does not exist")
        try:
            if kubeconfig is not None:
                return cls(await config.new_client_from_config(config_file=str(kubeconfig)))
            in_cluster = client.Configuration()
            config.load_incluster_config(  # type: ignore[no-untyped-call]
                client_configuration=in_cluster)
            return cls(client.ApiClient(in_cluster))
        except (config.ConfigException, OSError) as exc:
            raise ConfigError(f"cannot use {where}: {exc}",
                              hint=None if kubeconfig else "pass --kubeconfig") from None

    async def close(self) -> None:
        await self.api.close()

    async def _headers(self, content_type: str) -> dict[str, str]:
        headers = {"Accept": ContentType.JSON, "Content-Type": content_type}
        await self.api.update_params_for_auth(headers, [], ["BearerToken"])
        return headers

    async def request(self, method: str, path: str, *, body: Any = None,
                      query: Mapping[str, str] | None = None,
                      content_type: ContentType = ContentType.JSON) -> dict[str, Any]:
        data = None if body is None else json.dumps(body, separators=(",", ":"))
        session = self.api.rest_client.pool_manager
        async with self._slots:
            try:
                async with session.request(
                        method, self.host + path, params=query, data=data,
                        headers=await self._headers(content_type),
                        timeout=aiohttp.ClientTimeout(total=self._timeout)) as reply:
                    payload = await reply.read()
                    code = reply.status
            except (aiohttp.ClientError, TimeoutError, OSError) as exc:
                raise KubeError(code=0, reason=type(exc).__name__,
                                message=f"{method} {path}: {exc or 'no answer'}") from None
        decoded = _decode(payload)
        if not 200 <= code < 300:
            raise KubeError(code=code, reason=str(decoded.get("reason") or "HTTPError"),
                            message=str(decoded.get("message") or payload[:300]))
        return decoded

    async def delete(self, path: str) -> bool:
        """Delete the object at ``path``; False if it was already gone."""
        try:
            await self.request("DELETE", path)
        except KubeError as exc:
            if exc.code != 404:
                raise
            return False
        return True

    async def watch(self, path: str, *, query: Mapping[str, str],
                    idle_timeout: float) -> AsyncIterator[dict[str, Any]]:
        """Watch events until the server ends the stream; an ERROR event raises KubeError."""
        session = self.api.rest_client.pool_manager
        try:
            async with session.get(
                    self.host + path, params={**query, "watch": "true"},
                    headers=await self._headers(ContentType.JSON),
                    timeout=aiohttp.ClientTimeout(sock_connect=self._timeout,
                                                  sock_read=idle_timeout)) as reply:
                if reply.status != 200:
                    status = _decode(await reply.read())
                    raise KubeError(code=reply.status, reason=str(status.get("reason") or ""),
                                    message=str(status.get("message") or ""))
                async for line in reply.content:
                    event = _decode(line) if line.strip() else {}
                    if event.get("type") == "ERROR":
                        status = event.get("object") or {}
                        raise KubeError(code=int(status.get("code") or 0),
                                        reason=str(status.get("reason") or "WatchError"),
                                        message=str(status.get("message") or ""))
                    if event:
                        yield event
        except (aiohttp.ClientError, TimeoutError, OSError, ValueError) as exc:
            raise KubeError(code=0, reason=type(exc).__name__,
                            message=f"watch {path}: {exc or 'connection lost'}") from None


def _decode(payload: bytes) -> dict[str, Any]:
    try:
        value = json.loads(payload) if payload else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
