"""The StartSimulation request built from a spec; every unary call answered or refused
through the one helper."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from simkube.ctrl.driving import (
    CALL_TIMEOUT,
    CANCEL_TIMEOUT,
    DriverClient,
    DriverError,
    start_request,
)
from simkube.gen.simkube.driver.v1 import driver_pb2
from simkube.simulation.spec import parse_spec

pytestmark = pytest.mark.unit


def test_file_source() -> None:
    spec = parse_spec({"spec": {"trace": {"path": "/t.sktrace"}, "speed": 10,
                                "duration": "2m", "namespacePrefix": "p",
                                "podTiming": {"startupDelay": "1s"}}})
    request = start_request(name="s-r1", spec=spec)
    assert request.WhichOneof("source") == "trace_url"
    assert (request.name, request.trace_url, request.speed) == ("s-r1", "/t.sktrace", 10.0)
    assert (request.duration, request.namespace_prefix) == ("2m", "p")
    assert request.pod_timing.startup_delay == "1s"
    assert request.cleanup is False
    assert request.remove_hpas is False
    removed = parse_spec({"spec": {"trace": {"path": "/t.sktrace"}, "hpa": "removed"}})
    assert start_request(name="s-r1", spec=removed).remove_hpas is True
    assert request.gate_scale_up is False
    assert start_request(name="s-r1", spec=spec, gate_scale_up=True).gate_scale_up is True
    assert request.hold_for_pod_work is False
    assert start_request(name="s-r1", spec=spec, hold_pod_work=True).hold_for_pod_work is True


def test_tracer_source() -> None:
    spec = parse_spec({"spec": {"trace": {"tracer": {
        "address": "127.0.0.1:5", "start": "1970-01-01T00:00:01Z", "namespaces": ["shop"]}}}})
    request = start_request(name="s-r2", spec=spec)
    assert request.WhichOneof("source") == "tracer"
    assert (request.tracer.address, request.tracer.start_ts_ms) == ("127.0.0.1:5", 1000)
    assert request.tracer.end_ts_ms == 0
    assert list(request.tracer.filters.include_namespaces) == ["shop"]


def test_transient_codes() -> None:
    assert DriverError(code=grpc.StatusCode.UNAVAILABLE, message="").transient
    assert not DriverError(code=grpc.StatusCode.NOT_FOUND, message="").transient


class Stub:
    """The generated stub's unary methods, answering or refusing as told."""

    def __init__(self, refusal: grpc.aio.AioRpcError | None = None) -> None:
        self.refusal = refusal
        self.timeouts: dict[str, float] = {}

    def _unary(self, method: str, reply: Any) -> Any:
        async def call(request: Any, *, timeout: float) -> Any:
            self.timeouts[method] = timeout
            if self.refusal is not None:
                raise self.refusal
            return reply
        return call

    def __getattr__(self, method: str) -> Any:
        replies = {
            "ListSimulations": driver_pb2.ListSimulationsResponse(simulations=[
                driver_pb2.SimulationProgress(name="a-r1"),
                driver_pb2.SimulationProgress(name="a-r2")]),
            "StartSimulation": driver_pb2.StartSimulationResponse(
                progress=driver_pb2.SimulationProgress(name="a-r1")),
        }
        return self._unary(method, replies.get(method, driver_pb2.SimulationProgress(
            name="a-r1")))


def client(stub: Stub) -> DriverClient:
    driver = DriverClient(address="127.0.0.1:1")
    driver._stub = stub  # type: ignore[assignment]
    return driver


async def test_every_call_answers_through_one_helper() -> None:
    stub = Stub()
    driver = client(stub)
    assert sorted(await driver.runs()) == ["a-r1", "a-r2"]
    spec = parse_spec({"spec": {"trace": {"path": "/t.sktrace"}}})
    assert (await driver.start(name="a-r1", spec=spec)).name == "a-r1"
    for call in (driver.pause, driver.resume, driver.cancel):
        assert (await call("a-r1")).name == "a-r1"
    assert stub.timeouts["Cancel"] == CANCEL_TIMEOUT  # Cancel waits for garbage collection
    assert stub.timeouts["Pause"] == CALL_TIMEOUT
    await driver.close()


async def test_every_refusal_becomes_a_driver_error() -> None:
    refusal = grpc.aio.AioRpcError(grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(),
                                   grpc.aio.Metadata(), details="connection refused")
    driver = client(Stub(refusal))
    for call in (driver.pause, driver.resume, driver.cancel):
        with pytest.raises(DriverError) as caught:
            await call("a-r1")
        assert (caught.value.code, caught.value.message) == (grpc.StatusCode.UNAVAILABLE,
                                                             "connection refused")
        assert caught.value.transient
    with pytest.raises(DriverError):
        await driver.runs()
    await driver.close()
