"""sk-driver's gRPC API as sk-ctrl uses it: start a run, follow it, pause, resume, hold,
release, cancel, list.

Every refusal becomes a ``DriverError`` that keeps the driver's status code and message (the
message is what the user sees on the Simulation) and says whether trying again can help: an
unreachable driver may come back, a bad trace path will not.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Protocol, TypeVar

import grpc

from simkube.gen.simkube.driver.v1 import driver_pb2, driver_pb2_grpc
from simkube.gen.simkube.tracer.v1 import tracer_pb2
from simkube.simulation.spec import HpaMode, SimulationSpec
from simkube.simulation.trace_clock import TraceClock

STATE = driver_pb2.SimulationState
FINAL_STATES = frozenset({STATE.SIMULATION_STATE_SUCCEEDED, STATE.SIMULATION_STATE_FAILED,
                          STATE.SIMULATION_STATE_CANCELLED})
TRANSIENT_CODES = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED,
                             grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.ABORTED})
CALL_TIMEOUT = 60.0
CANCEL_TIMEOUT = 660.0  # Cancel waits for garbage collection (the driver allows 600 s)
WATCH_INTERVAL = "250ms"
HOLD_CALL_TIMEOUT = 2.0  # a hold is worth less than a stalled sk-ctrl
R = TypeVar("R")


class DriverError(Exception):
    def __init__(self, *, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    @property
    def transient(self) -> bool:
        return self.code in TRANSIENT_CODES

    @classmethod
    def from_rpc(cls, exc: grpc.aio.AioRpcError) -> DriverError:
        details = exc.details() or exc.code().name
        return cls(code=exc.code(), message=details)


def report_progress(clock: TraceClock, progress: driver_pb2.SimulationProgress) -> None:
    """Tell ``clock`` where the run stands: its trace time moves while it runs, at the held
    speed while held for the autoscaler."""
    clock.report(trace_s=progress.trace_time_ms / 1000,
                 running=progress.state == STATE.SIMULATION_STATE_RUNNING,
                 held=progress.held, length_s=progress.trace_length_ms / 1000)


def start_request(*, name: str, spec: SimulationSpec, gate_scale_up: bool = False,
                  hold_pod_work: bool = False) -> driver_pb2.StartSimulationRequest:
    """The StartSimulation call for run ``name`` of ``spec``; the run's root is kept."""
    request = driver_pb2.StartSimulationRequest(
        name=name, speed=spec.scale.speed, duration=spec.duration,
        namespace_prefix=spec.namespace_prefix, cleanup=False,
        remove_hpas=spec.hpa is HpaMode.REMOVED, gate_scale_up=gate_scale_up,
        hold_for_pod_work=hold_pod_work,
        pod_timing=driver_pb2.PodTiming(startup_delay=spec.startup_delay,
                                        startup_jitter=spec.startup_jitter,
                                        lifetime_jitter=spec.lifetime_jitter))
    if spec.tracer is not None:
        window = spec.tracer
        request.tracer.CopyFrom(driver_pb2.TracerSource(
            address=window.address, start_ts_ms=window.start_ms, end_ts_ms=window.end_ms,
            tls=window.tls,
            filters=tracer_pb2.ExportFilters(include_namespaces=list(window.namespaces))))
    else:
        request.trace_url = spec.trace_url or ""
    return request


class Driver(Protocol):
    """What sk-ctrl asks of sk-driver (``DriverClient``; a scripted fake in the unit tests)."""

    address: str

    async def start(self, *, name: str, spec: SimulationSpec, gate_scale_up: bool = False,
                    hold_pod_work: bool = False) -> driver_pb2.SimulationProgress: ...
    def watch(self, name: str) -> AsyncIterator[driver_pb2.SimulationProgress]: ...
    async def pause(self, name: str) -> driver_pb2.SimulationProgress: ...
    async def resume(self, name: str) -> driver_pb2.SimulationProgress: ...
    async def hold(self, name: str, *, expires_after: str) -> driver_pb2.SimulationProgress: ...
    async def release(self, name: str) -> driver_pb2.SimulationProgress: ...
    async def cancel(self, name: str) -> driver_pb2.SimulationProgress: ...
    async def runs(self) -> dict[str, driver_pb2.SimulationProgress]: ...


class DriverClient:
    def __init__(self, *, address: str, tls: bool = False, ca_file: Path | None = None) -> None:
        if tls:
            roots = ca_file.read_bytes() if ca_file is not None else None
            self._channel = grpc.aio.secure_channel(
                address, grpc.ssl_channel_credentials(root_certificates=roots))
        else:
            self._channel = grpc.aio.insecure_channel(address)
        self._stub = driver_pb2_grpc.DriverStub(self._channel)
        self.address = address

    async def close(self) -> None:
        await self._channel.close()

    async def _call(self, method: Callable[..., Awaitable[R]], request: object, *,
                    timeout: float = CALL_TIMEOUT) -> R:
        """One unary RPC; a refusal becomes a ``DriverError``."""
        try:
            return await method(request, timeout=timeout)
        except grpc.aio.AioRpcError as exc:
            raise DriverError.from_rpc(exc) from None

    async def start(self, *, name: str, spec: SimulationSpec, gate_scale_up: bool = False,
                    hold_pod_work: bool = False) -> driver_pb2.SimulationProgress:
        reply = await self._call(self._stub.StartSimulation, start_request(
            name=name, spec=spec, gate_scale_up=gate_scale_up, hold_pod_work=hold_pod_work))
        return reply.progress

    async def watch(self, name: str) -> AsyncIterator[driver_pb2.SimulationProgress]:
        """Progress until the run ends; the last update is its final state."""
        call = self._stub.WatchSimulation(
            driver_pb2.WatchSimulationRequest(name=name, interval=WATCH_INTERVAL))
        try:
            async for progress in call:
                yield progress
        except grpc.aio.AioRpcError as exc:
            raise DriverError.from_rpc(exc) from None
        finally:
            call.cancel()

    async def pause(self, name: str) -> driver_pb2.SimulationProgress:
        return await self._call(self._stub.Pause, driver_pb2.PauseRequest(name=name))

    async def resume(self, name: str) -> driver_pb2.SimulationProgress:
        return await self._call(self._stub.Resume, driver_pb2.ResumeRequest(name=name))

    async def hold(self, name: str, *, expires_after: str) -> driver_pb2.SimulationProgress:
        """Stop run ``name``'s clock while the autoscaler reacts (not a pause; it ends by
        itself after ``expires_after`` unless held again)."""
        return await self._call(self._stub.Hold, driver_pb2.HoldRequest(
            name=name, expires_after=expires_after), timeout=HOLD_CALL_TIMEOUT)

    async def release(self, name: str) -> driver_pb2.SimulationProgress:
        return await self._call(self._stub.Release, driver_pb2.ReleaseRequest(name=name),
                                timeout=HOLD_CALL_TIMEOUT)

    async def cancel(self, name: str) -> driver_pb2.SimulationProgress:
        """Stop run ``name`` (if still going), delete its root and wait for GC."""
        return await self._call(self._stub.Cancel, driver_pb2.CancelRequest(name=name),
                                timeout=CANCEL_TIMEOUT)

    async def runs(self) -> dict[str, driver_pb2.SimulationProgress]:
        """Every run the driver knows, by name."""
        reply = await self._call(self._stub.ListSimulations,
                                 driver_pb2.ListSimulationsRequest())
        return {progress.name: progress for progress in reply.simulations}
