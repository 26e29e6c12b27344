"""The Driver gRPC service: RPCs onto the registry, errors onto status codes.

Every error a caller can cause is answered with a specific status and a message that names
the field or the simulation; nothing is created when a start is refused. Streams end with
the simulation's final state, so a watcher never has to poll to learn how it ended.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, TypeVar

import grpc

from simkube.core.durations import parse_duration
from simkube.core.errors import SimkubeError
from simkube.core.kubeapi import ApiError
from simkube.core.logs import get_logger
from simkube.core.serving import status_code
from simkube.driver import sources
from simkube.driver.errors import DriverInputError, SimulationNotFoundError
from simkube.driver.messages import options_from_request, progress_to_proto, tracer_spec
from simkube.driver.registry import Registry
from simkube.driver.simulation import Simulation
from simkube.gen.simkube.driver.v1 import driver_pb2, driver_pb2_grpc
from simkube.trace import TraceSource

log = get_logger(__name__)
DEFAULT_WATCH_INTERVAL_MS = 500
MIN_WATCH_INTERVAL_MS = 50
SERVICE_NAME = driver_pb2.DESCRIPTOR.services_by_name["Driver"].full_name

def status_for(error: Exception) -> grpc.StatusCode:
    """Each error's own status (``core.errors``); anything else is a bug: INTERNAL."""
    return status_code(error)


def _message(error: Exception) -> str:
    if isinstance(error, ApiError):
        return f"the simulated cluster's API server refused: {error}"
    return str(error)


Reply = TypeVar("Reply")
Handler = Callable[[Any, Any, grpc.aio.ServicerContext[Any, Any]], Awaitable[Reply]]


def answers_errors(handler: Handler[Reply]) -> Handler[Reply]:
    """Turn the driver's errors into a status code and message on the RPC."""
    @functools.wraps(handler)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext[Any, Any],
                      ) -> Reply:
        try:
            return await handler(self, request, context)
        except SimkubeError as exc:
            await context.abort(status_for(exc), _message(exc))
            raise  # unreachable: abort raises
    return wrapper


class DriverServicer(driver_pb2_grpc.DriverServicer):
    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    @answers_errors
    async def StartSimulation(self, request: driver_pb2.StartSimulationRequest,  # noqa: N802
                              context: grpc.aio.ServicerContext[Any, Any],
                              ) -> driver_pb2.StartSimulationResponse:
        options = options_from_request(request)
        simulation = await self.registry.start(options, lambda: _open_source(request))
        snapshot = simulation.snapshot()
        return driver_pb2.StartSimulationResponse(name=simulation.name,
                                                  root_uid=snapshot.root_uid,
                                                  progress=progress_to_proto(snapshot))

    async def WatchSimulation(self, request: driver_pb2.WatchSimulationRequest,  # noqa: N802
                              context: grpc.aio.ServicerContext[Any, Any],
                              ) -> AsyncIterator[driver_pb2.SimulationProgress]:
        try:
            simulation = self.registry.get(request.name)
            interval_ms = (parse_duration(request.interval, field="interval")
                           if request.interval else DEFAULT_WATCH_INTERVAL_MS)
        except SimkubeError as exc:
            await context.abort(status_for(exc), _message(exc))
            return
        interval = max(interval_ms, MIN_WATCH_INTERVAL_MS) / 1000
        async for snapshot in simulation.changes(interval=interval):
            yield progress_to_proto(snapshot)

    @answers_errors
    async def Pause(self, request: driver_pb2.PauseRequest,  # noqa: N802
                    context: grpc.aio.ServicerContext[Any, Any],
                    ) -> driver_pb2.SimulationProgress:
        return self._control(request.name, Simulation.pause)

    @answers_errors
    async def Resume(self, request: driver_pb2.ResumeRequest,  # noqa: N802
                     context: grpc.aio.ServicerContext[Any, Any],
                     ) -> driver_pb2.SimulationProgress:
        return self._control(request.name, Simulation.resume)

    @answers_errors
    async def Hold(self, request: driver_pb2.HoldRequest,  # noqa: N802
                   context: grpc.aio.ServicerContext[Any, Any],
                   ) -> driver_pb2.SimulationProgress:
        expires_ms = (parse_duration(request.expires_after, field="expires_after")
                      if request.expires_after else None)
        simulation = self.registry.get(request.name)
        if expires_ms is None:
            simulation.hold()
        else:
            simulation.hold(expires_after_s=expires_ms / 1000)
        return progress_to_proto(simulation.snapshot())

    @answers_errors
    async def Release(self, request: driver_pb2.ReleaseRequest,  # noqa: N802
                      context: grpc.aio.ServicerContext[Any, Any],
                      ) -> driver_pb2.SimulationProgress:
        return self._control(request.name, Simulation.release)

    def _control(self, name: str, action: Callable[[Simulation], None],
                 ) -> driver_pb2.SimulationProgress:
        simulation = self.registry.get(name)
        action(simulation)
        return progress_to_proto(simulation.snapshot())

    @answers_errors
    async def Cancel(self, request: driver_pb2.CancelRequest,  # noqa: N802
                     context: grpc.aio.ServicerContext[Any, Any],
                     ) -> driver_pb2.SimulationProgress:
        """Stop a run and delete its objects; for a run an earlier driver process left (it
        died, so nothing here knows the run) the objects are deleted all the same, always
        waiting for garbage collection."""
        try:
            simulation = self.registry.get(request.name)
        except SimulationNotFoundError:
            await self.registry.clear_leftover(request.name)
            return driver_pb2.SimulationProgress(
                name=request.name, state=driver_pb2.SimulationState.SIMULATION_STATE_CANCELLED,
                message="deleted what an earlier sk-driver process left of this run")
        return progress_to_proto(await simulation.cancel(wait=not request.no_wait))

    @answers_errors
    async def ListSimulations(self, request: driver_pb2.ListSimulationsRequest,  # noqa: N802
                              context: grpc.aio.ServicerContext[Any, Any],
                              ) -> driver_pb2.ListSimulationsResponse:
        return driver_pb2.ListSimulationsResponse(
            simulations=[progress_to_proto(sim.snapshot()) for sim in self.registry.all()])


async def _open_source(request: driver_pb2.StartSimulationRequest) -> TraceSource:
    which = request.WhichOneof("source")
    if which == "trace_url":
        return await sources.from_location(request.trace_url, field="trace_url")
    if which == "trace_data":
        return sources.from_bytes(request.trace_data)
    if which == "tracer":
        return await sources.from_tracer(tracer_spec(request.tracer), field="tracer")
    raise DriverInputError("no trace given: set one of trace_url, trace_data or tracer",
                           field="source")


def registrar(servicer: DriverServicer) -> Callable[[grpc.aio.Server], Sequence[str]]:
    """For ``core.serving.Service.start``."""
    def register(server: grpc.aio.Server) -> Sequence[str]:
        driver_pb2_grpc.add_DriverServicer_to_server(servicer, server)
        return [SERVICE_NAME]
    return register
