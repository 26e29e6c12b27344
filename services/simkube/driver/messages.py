"""Translation between the Driver API's protobuf messages and the driver's own types.

Kept apart from the servicer so that the rules "proto3 zero means default" and "field names
in errors are the proto's" live in one small place, and the rest of the driver never sees
generated classes.
"""

from __future__ import annotations

from simkube.driver.options import SimulationOptions, build_options
from simkube.driver.progress import FailureRecord, ProgressSnapshot, SimulationState
from simkube.driver.sources import TracerSpec
from simkube.gen.simkube.driver.v1 import driver_pb2

STATE_TO_PROTO = {state: driver_pb2.SimulationState.Value(f"SIMULATION_STATE_{state.name}")
                  for state in SimulationState}


def options_from_request(request: driver_pb2.StartSimulationRequest) -> SimulationOptions:
    placement = request.placement if request.HasField("placement") else None
    timing = request.pod_timing
    return build_options(
        name=request.name,
        speed=request.speed if request.speed != 0 else None,
        duration=request.duration or None,
        prefix=request.namespace_prefix or None,
        node_selector=dict(placement.node_selector) if placement else None,
        tolerations=[{"key": t.key, "operator": t.operator, "value": t.value,
                      "effect": t.effect} for t in placement.tolerations] if placement else None,
        startup_delay=timing.startup_delay or None,
        startup_jitter=timing.startup_jitter or None,
        lifetime_jitter=timing.lifetime_jitter or None,
        cleanup=request.cleanup,
        max_concurrency=request.max_concurrency or None,
        remove_hpas=request.remove_hpas,
        gate_scale_up=request.gate_scale_up,
        hold_pod_work=request.hold_for_pod_work,
        field_names={"startup_delay": "pod_timing.startup_delay",
                     "startup_jitter": "pod_timing.startup_jitter",
                     "lifetime_jitter": "pod_timing.lifetime_jitter",
                     "prefix": "namespace_prefix",
                     "node_selector": "placement.node_selector",
                     "tolerations": "placement.tolerations"})


def tracer_spec(source: driver_pb2.TracerSource) -> TracerSpec:
    return TracerSpec(address=source.address, start_ts_ms=source.start_ts_ms,
                      end_ts_ms=source.end_ts_ms,
                      filters=source.filters if source.HasField("filters") else None,
                      tls=source.tls, ca_file=source.ca_file)


def failure_to_proto(failure: FailureRecord) -> driver_pb2.Failure:
    return driver_pb2.Failure(trace_offset_ms=failure.trace_offset_ms,
                              operation=failure.operation.value, object=failure.object,
                              code=failure.code, reason=failure.reason,
                              message=failure.message, attempts=failure.attempts)


def progress_to_proto(snapshot: ProgressSnapshot) -> driver_pb2.SimulationProgress:
    return driver_pb2.SimulationProgress(
        name=snapshot.name, state=STATE_TO_PROTO[snapshot.state],
        events_applied=snapshot.events_applied, events_total=snapshot.events_total,
        objects_applied=snapshot.objects_applied, objects_failed=snapshot.objects_failed,
        trace_time_ms=snapshot.trace_time_ms, trace_length_ms=snapshot.trace_length_ms,
        wall_time_ms=snapshot.wall_time_ms, lag_current_ms=snapshot.lag_current_ms,
        lag_p50_ms=snapshot.lag_p50_ms, lag_p99_ms=snapshot.lag_p99_ms,
        lag_max_ms=snapshot.lag_max_ms,
        failures=[failure_to_proto(f) for f in snapshot.failures], message=snapshot.message,
        speed=snapshot.speed, pods_timed=snapshot.pods_timed, cleaned_up=snapshot.cleaned_up,
        root_uid=snapshot.root_uid, paused_ms=snapshot.paused_ms,
        held_ms=snapshot.held_ms, held=snapshot.held,
        held_since_unix_ms=snapshot.held_since_unix_ms)
