"""Everything a gRPC service needs besides its own RPCs, written once for all services.

``Service`` runs a ``grpc.aio`` server with the standard health service, server reflection,
Prometheus metrics over HTTP (RPC counts and latencies by method and status code), optional
TLS or mTLS, and graceful shutdown on SIGTERM/SIGINT: health flips to NOT_SERVING first so
load balancers stop sending, then in-flight RPCs get ``grace`` seconds to finish.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio
from grpc_reflection.v1alpha import reflection
from prometheus_client import CollectorRegistry, Counter, Histogram, start_http_server

from simkube.core.errors import ConfigError, SimkubeError
from simkube.core.logs import get_logger

log = get_logger(__name__)


@dataclass(frozen=True, kw_only=True)
class TlsConfig:
    """Server certificate and key; with ``client_ca`` clients must present a certificate."""

    cert: Path
    key: Path
    client_ca: Path | None = None

    def credentials(self) -> grpc.ServerCredentials:
        def read(path: Path, what: str) -> bytes:
            try:
                return path.read_bytes()
            except OSError as exc:
                raise ConfigError(f"TLS {what} {path} cannot be read: {exc.strerror}") from None
        pair = [(read(self.key, "key"), read(self.cert, "certificate"))]
        ca = read(self.client_ca, "client CA") if self.client_ca else None
        return grpc.ssl_server_credentials(pair, root_certificates=ca,
                                           require_client_auth=ca is not None)


def status_code(error: BaseException) -> grpc.StatusCode:
    """The code an RPC ends with for ``error``: a ``SimkubeError``'s status, else INTERNAL."""
    if isinstance(error, SimkubeError):
        return grpc.StatusCode[error.status.name]
    return grpc.StatusCode.INTERNAL


def parse_address(value: str, *, flag: str) -> tuple[str, int]:
    """``host:port`` (IPv6 as ``[::1]:port``) checked for shape and port range."""
    host, sep, port_text = value.rpartition(":")
    if not sep or not host or not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise ConfigError(f"{flag} {value!r} is not HOST:PORT (for example 127.0.0.1:8080)")
    return host.strip("[]"), int(port_text)


@dataclass(kw_only=True)
class RpcMetrics:
    """Per-service Prometheus collectors in their own registry (tests run many services)."""

    service: str
    registry: CollectorRegistry = field(default_factory=CollectorRegistry)

    def __post_init__(self) -> None:
        labels = ("method", "code")
        self.calls = Counter("grpc_server_handled_total", "RPCs completed", labels,
                             registry=self.registry)
        self.latency = Histogram("grpc_server_handling_seconds", "RPC duration", ("method",),
                                 registry=self.registry,
                                 buckets=(.0005, .001, .0025, .005, .01, .025, .05, .1, .25,
                                          .5, 1, 2.5, 5, 10, 30))


class _MetricsInterceptor(grpc.aio.ServerInterceptor):
    """Counts and times every RPC by method and status code.

    A method's measuring handler is built once, on its first call, and reused: Cluster
    Autoscaler makes thousands of serial calls a loop, so nothing per call is rebuilt (no
    closures, no handler tuple, no label lookup for the usual OK).
    """

    def __init__(self, metrics: RpcMetrics) -> None:
        self._metrics = metrics
        self._measured: dict[str, Any] = {}

    async def intercept_service(self, continuation: Callable[[Any], Awaitable[Any]],
                                details: Any) -> Any:
        measured = self._measured.get(details.method)
        if measured is None:
            handler = await continuation(details)
            if handler is None:
                return None
            measured = self._measured[details.method] = _measuring(
                handler, method=details.method.rsplit("/", 1)[-1], metrics=self._metrics)
        return measured


def _measuring(handler: Any, *, method: str, metrics: RpcMetrics) -> Any:
    """``handler`` with its calls counted and timed under ``method``."""
    ok = metrics.calls.labels(method, grpc.StatusCode.OK.name)
    latency = metrics.latency.labels(method)

    def record(started: float, context: Any) -> None:
        latency.observe(time.perf_counter() - started)
        code = context.code()
        if isinstance(code, grpc.StatusCode) and code is not grpc.StatusCode.OK:
            metrics.calls.labels(method, code.name).inc()
        else:  # None: the handler returned without setting a code
            ok.inc()

    if handler.unary_unary or handler.stream_unary:
        inner = handler.unary_unary or handler.stream_unary

        async def unary(request: Any, context: Any) -> Any:
            started = time.perf_counter()
            try:
                return await inner(request, context)
            finally:
                record(started, context)
        factory = (grpc.unary_unary_rpc_method_handler if handler.unary_unary
                   else grpc.stream_unary_rpc_method_handler)
        return factory(unary, request_deserializer=handler.request_deserializer,
                       response_serializer=handler.response_serializer)
    inner_stream = handler.unary_stream or handler.stream_stream

    async def streaming(request: Any, context: Any) -> Any:
        started = time.perf_counter()
        try:
            async for item in inner_stream(request, context):
                yield item
        finally:
            record(started, context)
    factory = (grpc.unary_stream_rpc_method_handler if handler.unary_stream
               else grpc.stream_stream_rpc_method_handler)
    return factory(streaming, request_deserializer=handler.request_deserializer,
                   response_serializer=handler.response_serializer)


Registrar = Callable[[grpc.aio.Server], Sequence[str]]
"""Adds a service's servicers to the server and returns their full service names."""


@dataclass(kw_only=True)
class Service:
    name: str
    listen: str
    metrics_listen: str | None = None
    tls: TlsConfig | None = None
    grace: float = 10.0
    metrics: RpcMetrics = field(init=False)
    health: health_aio.HealthServicer = field(init=False)
    port: int = field(init=False, default=0)
    _server: grpc.aio.Server | None = field(init=False, default=None)
    _stopped: asyncio.Event = field(init=False, default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self.metrics = RpcMetrics(service=self.name)
        self.health = health_aio.HealthServicer()

    async def start(self, register: Registrar) -> None:
        host, port = parse_address(self.listen, flag="--listen")
        server = grpc.aio.server(interceptors=[_MetricsInterceptor(self.metrics)])
        names = list(register(server))
        health_pb2_grpc.add_HealthServicer_to_server(self.health, server)
        reflection.enable_server_reflection(
            [*names, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
             reflection.SERVICE_NAME], server)
        address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        try:
            if self.tls:
                self.port = server.add_secure_port(address, self.tls.credentials())
            else:
                self.port = server.add_insecure_port(address)
        except RuntimeError as exc:
            raise ConfigError(f"cannot listen on {self.listen}: {exc}") from None
        if self.metrics_listen:
            metrics_host, metrics_port = parse_address(self.metrics_listen,
                                                       flag="--metrics-listen")
            try:
                start_http_server(metrics_port, addr=metrics_host, registry=self.metrics.registry)
            except OSError as exc:
                raise ConfigError(f"cannot serve metrics on {self.metrics_listen}: "
                                  f"{exc.strerror}") from None
        await server.start()
        for full_name in ("", *names):
            await self.health.set(full_name, health_pb2.HealthCheckResponse.SERVING)
        self._server = server
        log.info("serving", service=self.name, port=self.port, tls=self.tls is not None)

    async def stop(self) -> None:
        if self._server is None:
            return
        await self.health.enter_graceful_shutdown()
        await self._server.stop(self.grace)
        self._server = None
        self._stopped.set()
        log.info("stopped", service=self.name)

    async def run_until_signalled(self) -> None:
        """Block until SIGTERM or SIGINT, then shut down gracefully."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, lambda: asyncio.ensure_future(self.stop()))
        await self._stopped.wait()
