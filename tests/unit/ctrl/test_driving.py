"""The StartSimulation request built from a spec."""

from __future__ import annotations

import grpc
import pytest

from simkube.ctrl.driving import DriverError, start_request
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
