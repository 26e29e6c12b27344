"""The gRPC health check, the one readiness signal every simkube service gives.

sk-cloudprov, sk-driver and sk-ctrl open their port only once they are ready, and answer the
standard ``grpc.health.v1`` service; ``SERVING`` means usable, anything else (including no
answer) means not yet. A probe is one call with a short deadline on a fresh channel, so a
restarted service is never judged by a stale connection.
"""

from __future__ import annotations

import grpc
from grpc_health.v1 import health_pb2

SCHEME = "grpc://"
PROBE_TIMEOUT = 2.0
CHECK_METHOD = "/grpc.health.v1.Health/Check"


def health_url(address: str) -> str:
    """How a gRPC service's health check is written where HTTP ones hold a URL."""
    return f"{SCHEME}{address}"


def probe(address: str, *, timeout: float = PROBE_TIMEOUT) -> tuple[bool, str]:
    """``(serving, detail)`` for one overall health check of the server at ``address``."""
    with grpc.insecure_channel(address.removeprefix(SCHEME)) as channel:
        # The method by name: the typing stubs' HealthStub declares no methods.
        check = channel.unary_unary(
            CHECK_METHOD, request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
            response_deserializer=health_pb2.HealthCheckResponse.FromString)
        try:
            reply: health_pb2.HealthCheckResponse = check(
                health_pb2.HealthCheckRequest(service=""), timeout=timeout)
        except grpc.RpcError as exc:
            code = exc.code() if isinstance(exc, grpc.Call) else None
            return False, f"gRPC {code.name if code else type(exc).__name__}"
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
    return reply.status == health_pb2.HealthCheckResponse.SERVING, f"gRPC health {status}"
