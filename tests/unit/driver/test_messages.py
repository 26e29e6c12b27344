from __future__ import annotations

import pytest

from simkube.core.durations import DurationError
from simkube.driver.errors import DriverInputError
from simkube.driver.messages import options_from_request, progress_to_proto, tracer_spec
from simkube.driver.progress import FailureRecord, Operation, ProgressSnapshot, SimulationState
from simkube.gen.simkube.driver.v1 import driver_pb2
from simkube.gen.simkube.tracer.v1 import tracer_pb2

pytestmark = pytest.mark.unit


def test_zero_values_mean_defaults() -> None:
    options = options_from_request(driver_pb2.StartSimulationRequest(name="sim"))
    assert (options.scale.speed, options.duration_ms, options.prefix) == (1.0, None, "virtual")
    assert dict(options.placement.node_selector) == {"type": "kwok"}
    assert options.remove_hpas is False
    assert options.pod_timing.scale_up_gated is False
    assert options.hold_pod_work is False


def test_every_field_is_used() -> None:
    request = driver_pb2.StartSimulationRequest(
        name="sim", speed=5, duration="2h", namespace_prefix="p", cleanup=True,
        max_concurrency=7, remove_hpas=True, gate_scale_up=True, hold_for_pod_work=True,
        placement=driver_pb2.Placement(node_selector={"a": "b"}, tolerations=[
            driver_pb2.Toleration(key="k", operator="Exists", effect="NoSchedule")]),
        pod_timing=driver_pb2.PodTiming(startup_delay="1s", startup_jitter="2s",
                                        lifetime_jitter="3s"))
    options = options_from_request(request)
    assert (options.scale.speed, options.duration_ms, options.prefix, options.max_concurrency) == (
        5.0, 7_200_000, "p", 7)
    assert dict(options.placement.node_selector) == {"a": "b"}
    assert options.placement.tolerations == (
        {"key": "k", "operator": "Exists", "effect": "NoSchedule"},)
    assert options.pod_timing.lifetime_jitter_ms == 3000
    assert options.cleanup
    assert options.remove_hpas
    assert options.pod_timing.scale_up_gated
    assert options.hold_pod_work


@pytest.mark.parametrize(("request_fields", "field"), [
    ({"name": "sim", "speed": -2}, "speed"),
    ({"name": "sim", "duration": "1 hour"}, "duration"),
    ({"name": "Sim"}, "name"),
    ({"name": "sim", "namespace_prefix": "-x"}, "namespace_prefix"),
    ({"name": "sim", "pod_timing": driver_pb2.PodTiming(startup_delay="x")},
     "pod_timing.startup_delay"),
])
def test_errors_use_proto_field_names(request_fields: dict[str, object], field: str) -> None:
    with pytest.raises((DriverInputError, DurationError)) as caught:
        options_from_request(driver_pb2.StartSimulationRequest(**request_fields))  # type: ignore[arg-type]
    assert caught.value.field == field


def test_tracer_sources() -> None:
    spec = tracer_spec(driver_pb2.TracerSource(
        address="t:1", start_ts_ms=1, end_ts_ms=2, tls=True, ca_file="ca.pem",
        filters=tracer_pb2.ExportFilters(include_kinds=["v1.Pod"])))
    assert (spec.address, spec.start_ts_ms, spec.end_ts_ms, spec.tls) == ("t:1", 1, 2, True)
    assert spec.filters is not None
    assert list(spec.filters.include_kinds) == ["v1.Pod"]
    assert tracer_spec(driver_pb2.TracerSource(address="t:1")).filters is None


def test_progress_messages() -> None:
    failure = FailureRecord(trace_offset_ms=3, operation=Operation.DELETE, object="o", code=403,
                            reason="Forbidden", message="m", attempts=2)
    message = progress_to_proto(ProgressSnapshot(
        name="sim", state=SimulationState.CANCELLING, events_applied=2, events_total=3,
        failures=(failure,), lag_p99_ms=1.5, cleaned_up=True))
    assert message.state == driver_pb2.SimulationState.SIMULATION_STATE_CANCELLING
    assert (message.events_applied, message.events_total, message.lag_p99_ms) == (2, 3, 1.5)
    assert message.failures[0].operation == "delete"
    assert message.cleaned_up
