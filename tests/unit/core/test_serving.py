from __future__ import annotations

import socket
from collections.abc import Sequence
from pathlib import Path

import grpc
import httpx
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from simkube.core.errors import ConfigError, NotFoundError
from simkube.core.kubeapi import ApiError
from simkube.core.serving import Service, TlsConfig, parse_address, status_code
from simkube.env.controlplane.certs import generate_pki

pytestmark = pytest.mark.unit


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _no_services(_server: grpc.aio.Server) -> Sequence[str]:
    return []


async def test_health_reflection_metrics_and_graceful_stop() -> None:
    metrics_port = _free_port()
    service = Service(name="test", listen="127.0.0.1:0",
                      metrics_listen=f"127.0.0.1:{metrics_port}", grace=1)
    await service.start(_no_services)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{service.port}") as channel:
        health = health_pb2_grpc.HealthStub(channel)
        reply = await health.Check(health_pb2.HealthCheckRequest(service=""))
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
        await health.Check(health_pb2.HealthCheckRequest(service=""))  # the same handler again
        with pytest.raises(grpc.aio.AioRpcError):
            await health.Check(health_pb2.HealthCheckRequest(service="nope"))

        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        async for response in stub.ServerReflectionInfo(iter([request])):
            names = {s.name for s in response.list_services_response.service}
            assert "grpc.health.v1.Health" in names
            break

        async with httpx.AsyncClient() as web:
            scrape = (await web.get(f"http://127.0.0.1:{metrics_port}/metrics")).text
        assert 'grpc_server_handled_total{code="OK",method="Check"} 2.0' in scrape
        assert 'grpc_server_handled_total{code="NOT_FOUND",method="Check"} 1.0' in scrape
        assert 'grpc_server_handling_seconds_count{method="Check"} 3.0' in scrape
        await service.stop()
        with pytest.raises(grpc.aio.AioRpcError):
            await health.Check(health_pb2.HealthCheckRequest(service=""), timeout=1)


async def test_mutual_tls_rejects_clients_without_a_certificate(tmp_path: Path) -> None:
    generate_pki(tmp_path)
    service = Service(name="tls", listen="127.0.0.1:0", grace=0.5,
                      tls=TlsConfig(cert=tmp_path / "apiserver.crt",
                                    key=tmp_path / "apiserver.key",
                                    client_ca=tmp_path / "ca.crt"))
    await service.start(_no_services)
    ca = (tmp_path / "ca.crt").read_bytes()
    target = f"localhost:{service.port}"
    try:
        good = grpc.ssl_channel_credentials(
            root_certificates=ca, private_key=(tmp_path / "admin.key").read_bytes(),
            certificate_chain=(tmp_path / "admin.crt").read_bytes())
        async with grpc.aio.secure_channel(target, good) as channel:
            reply = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(), timeout=5)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        anonymous = grpc.ssl_channel_credentials(root_certificates=ca)
        async with grpc.aio.secure_channel(target, anonymous) as channel:
            with pytest.raises(grpc.aio.AioRpcError):
                await health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(), timeout=5)
    finally:
        await service.stop()


def test_missing_tls_files_are_named(tmp_path: Path) -> None:
    config = TlsConfig(cert=tmp_path / "none.crt", key=tmp_path / "none.key")
    with pytest.raises(ConfigError, match=r"TLS key .*none\.key cannot be read"):
        config.credentials()


@pytest.mark.parametrize("value", ["8080", "host:", ":80", "h:99999", "h:x"])
def test_bad_addresses(value: str) -> None:
    with pytest.raises(ConfigError, match="is not HOST:PORT"):
        parse_address(value, flag="--listen")


def test_addresses() -> None:
    assert parse_address("0.0.0.0:50051", flag="--listen") == ("0.0.0.0", 50051)  # noqa: S104
    assert parse_address("[::1]:9", flag="--listen") == ("::1", 9)


def test_status_codes_of_errors() -> None:
    assert status_code(NotFoundError("no group")) is grpc.StatusCode.NOT_FOUND
    assert status_code(ConfigError("bad")) is grpc.StatusCode.INVALID_ARGUMENT
    assert status_code(ApiError(code=403, reason="Forbidden", message="no")) is (
        grpc.StatusCode.PERMISSION_DENIED)
    assert status_code(RuntimeError("a bug")) is grpc.StatusCode.INTERNAL
