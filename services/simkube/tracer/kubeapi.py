"""The few API server calls the tracer makes (GET, list pages, watch streams), done raw.

The generated clients of ``kubernetes_asyncio`` deserialise into model classes; the tracer
wants the JSON exactly as served (any kind, custom resources included), the HTTP status of
every failure (``410 GoneError`` means re-list, ``404`` means a CRD is missing) and the watch
stream line by line with bookmarks. So it calls ``ApiClient.call_api`` without preloading
and reads the response itself. Non-watch calls share a semaphore: the API server sees at
most ``concurrency`` of them from this tracer at once, however many kinds start together.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
from kubernetes_asyncio.client import ApiClient


class ApiError(Exception):
    """The API server refused a call, or could not be reached (``status`` 0)."""

    def __init__(self, message: str, *, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


class GoneError(ApiError):
    """``410 Gone``: the resourceVersion is too old (compacted); the caller must re-list."""


class KubeApi:
    def __init__(self, client: ApiClient, *, concurrency: int = 8,
                 request_timeout: float = 60.0) -> None:
        self.client = client
        self._slots = asyncio.Semaphore(concurrency)
        self._timeout = request_timeout

    async def get(self, path: str, query: dict[str, str] | None = None) -> dict[str, Any]:
        async with self._slots:
            response = await self._call(path, query, aiohttp.ClientTimeout(total=self._timeout))
            try:
                body = await response.read()
            except (aiohttp.ClientError, TimeoutError) as exc:
                raise ApiError(f"GET {path}: {_describe(exc)}") from None
            finally:
                response.release()
        try:
            data = json.loads(body)
        except ValueError:
            raise ApiError(f"GET {path}: the API server sent something that is not JSON",
                           status=response.status) from None
        if not isinstance(data, dict):
            raise ApiError(f"GET {path}: expected a JSON object")
        return data

    async def watch(self, path: str, *, query: dict[str, str],
                    read_timeout: float) -> AsyncIterator[dict[str, Any]]:
        """Watch events as JSON objects; the stream ends when the server closes it."""
        response = await self._call(path, {**query, "watch": "1"},
                                    aiohttp.ClientTimeout(sock_connect=self._timeout,
                                                          sock_read=read_timeout))
        try:
            async for line in response.content:
                if not line.strip():
                    continue
                try:
                    event = json.loads(line)
                except ValueError:
                    raise ApiError(f"watch {path}: a line that is not JSON") from None
                if isinstance(event, dict) and event.get("type") == "ERROR":
                    raise _status_error(f"watch {path}", event.get("object") or {})
                if isinstance(event, dict):
                    yield event
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise ApiError(f"watch {path}: {_describe(exc)}") from None
        finally:
            response.release()

    async def _call(self, path: str, query: dict[str, str] | None,
                    timeout: aiohttp.ClientTimeout) -> Any:
        try:
            response = await self.client.call_api(
                path, "GET", query_params=list((query or {}).items()),
                header_params={"Accept": "application/json"}, auth_settings=["BearerToken"],
                _preload_content=False, _request_timeout=timeout)
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            raise ApiError(f"GET {path}: {_describe(exc)}") from None
        if response.status != 200:
            try:
                raw = await response.read()
                status = json.loads(raw) if raw else {}
            except (ValueError, aiohttp.ClientError, TimeoutError):
                status = {}
            finally:
                response.release()
            status = status if isinstance(status, dict) else {}
            raise _status_error(f"GET {path}", {"code": response.status,
                                                 "message": response.reason, **status})
        return response


def _status_error(what: str, status: dict[str, Any]) -> ApiError:
    raw_code = status.get("code")
    code = raw_code if isinstance(raw_code, int) else 0
    message = f"{what}: {code} {status.get('reason') or ''} {status.get('message') or ''}"
    error = GoneError if code == 410 else ApiError
    return error(" ".join(message.split()), status=code)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "timed out"
    return str(exc) or type(exc).__name__
