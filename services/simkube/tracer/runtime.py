"""A running tracer: store, API client, one watcher per kind, recorder, gRPC service.

Start-up checks every input (config, kubeconfig, store lock, listen address) before any
watch begins, so a mistake exits with a message and leaves nothing running. The API server
being down is not a start-up error: the service starts, serves what the store holds, and the
watchers back off until it answers. Shutdown stops the RPCs, then the watchers, records
what is still queued and seals the open segment, so a clean stop loses nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import grpc

from simkube.core.kubeapi import Discovery, KubeClient, NodeTypes
from simkube.core.logs import get_logger
from simkube.core.serving import Service, TlsConfig, parse_address
from simkube.gen.simkube.tracer.v1 import tracer_pb2, tracer_pb2_grpc
from simkube.trace import ObjectRef, TraceHeader
from simkube.tracer.config import KindConfig, TracerConfig
from simkube.tracer.kinds import KindKey
from simkube.tracer.lifecycles import LifecycleTracker
from simkube.tracer.metrics import TracerMetrics
from simkube.tracer.owners import OwnerResolver
from simkube.tracer.recorder import Recorder
from simkube.tracer.service import TracerService
from simkube.tracer.status import KindStatus
from simkube.tracer.store import Store
from simkube.tracer.usage import UsageBook
from simkube.tracer.usage_sampling import UsageSampler
from simkube.tracer.watching import KindWatcher

log = get_logger(__name__)
POD = KindKey(group="", version="v1", kind="Pod")
REQUEST_TIMEOUT = 60.0


@dataclass(frozen=True, slots=True, kw_only=True)
class TracerOptions:
    config: TracerConfig
    store: Path
    kubeconfig: Path | None = None
    listen: str = "127.0.0.1:50051"
    metrics_listen: str | None = None
    tls: TlsConfig | None = None
    segment_bytes: int = 64 * 2**20
    segment_seconds: float = 3600.0
    flush_seconds: float = 1.0
    concurrency: int = 8


class Tracer:
    def __init__(self, options: TracerOptions) -> None:
        self.options = options
        cfg = options.config
        self.header = TraceHeader(source_cluster=cfg.cluster_name,
                                  tracked_kinds=tuple(kind.tracked() for kind in cfg.kinds))
        self.statuses = [KindStatus(kind=kind.kind.key) for kind in cfg.kinds]
        self.service = Service(name="sk-tracer", listen=options.listen,
                               metrics_listen=options.metrics_listen, tls=options.tls)
        self.store: Store | None = None
        self.recorder: Recorder | None = None
        self.usage = UsageBook(cfg.usage) if cfg.usage.enabled else None
        self._api: KubeClient | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._watchers: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        options = self.options
        parse_address(options.listen, flag="--listen")
        if options.metrics_listen:
            parse_address(options.metrics_listen, flag="--metrics-listen")
        pool = len(options.config.kinds) + options.concurrency + 4
        # A kubeconfig, else in a pod its service account, else the default kubeconfig. Lists
        # and GETs share ``concurrency`` slots; each kind's watch has its own connection.
        self._api = await KubeClient.connect(
            kubeconfig=options.kubeconfig, pool_size=pool, concurrency=options.concurrency,
            timeout=REQUEST_TIMEOUT, connect_timeout=REQUEST_TIMEOUT, default_kubeconfig=True)
        try:
            store = self.store = Store(options.store, header=self.header,
                                       retention=options.config.retention,
                                       segment_bytes=options.segment_bytes,
                                       segment_seconds=options.segment_seconds,
                                       keep=self._still_tracked)
            servicer = TracerService(store=store, statuses=self.statuses,
                                     header=lambda: replace(self.header,
                                                            created_ms=store.now_ms()),
                                     usage=self.usage)

            def register(server: grpc.aio.Server) -> Sequence[str]:
                tracer_pb2_grpc.add_TracerServicer_to_server(servicer, server)
                return [tracer_pb2.DESCRIPTOR.services_by_name["Tracer"].full_name]

            await self.service.start(register)
        except BaseException:
            await self._release()
            raise
        self._start_recording(store, self._api)

    def _still_tracked(self, ref: ObjectRef) -> bool:
        """Whether an object recovered from the store is still within what is tracked (the
        config may have changed between runs); others are forgotten, not deleted."""
        kind = self.options.config.kind(ref.kind_key)
        return kind is not None and kind.in_scope(ref.namespace)

    def _start_recording(self, store: Store, api: KubeClient) -> None:
        cfg = self.options.config
        lifecycle_kinds = frozenset(kind.kind.key for kind in cfg.kinds if kind.track_lifecycle)
        lifecycles = (LifecycleTracker(lifecycle_kinds=lifecycle_kinds,
                                       running=store.running)
                      if lifecycle_kinds else None)
        recorder = self.recorder = Recorder(store, secrets=cfg.secrets, lifecycles=lifecycles)
        discovery = Discovery(api)
        owners = OwnerResolver(api, discovery)
        node_types = NodeTypes(api) if lifecycle_kinds else None
        watchers = [KindWatcher(kind=kind, status=status, api=api, discovery=discovery,
                                owners=owners, recorder=recorder, node_types=node_types)
                    for kind, status in zip(cfg.kinds, self.statuses, strict=True)]
        if lifecycle_kinds and cfg.kind(POD.key) is None:
            # Pods are watched for their lifecycles only; none of them is recorded. When every
            # lifecycle-tracked kind is limited to some namespaces, so is this watch.
            owners_of_runs = [kind for kind in cfg.kinds if kind.track_lifecycle]
            limited = all(kind.namespaces for kind in owners_of_runs)
            pods = KindConfig(kind=POD, namespaces=frozenset().union(
                *(kind.namespaces for kind in owners_of_runs)) if limited else frozenset())
            watchers.append(KindWatcher(kind=pods, status=KindStatus(kind=POD.key), api=api,
                                        discovery=discovery, owners=owners,
                                        recorder=recorder, record=False,
                                        node_types=node_types))
        self._watchers = [asyncio.create_task(watcher.run(), name=f"watch {watcher.kind.kind}")
                          for watcher in watchers]
        metrics = TracerMetrics(self.service.metrics.registry)
        self._tasks = [asyncio.create_task(recorder.run(), name="recorder"),
                       asyncio.create_task(self._maintain(store, recorder, metrics),
                                           name="maintenance")]
        if self.usage is not None:
            sampler = UsageSampler(api=api, discovery=discovery, owners=owners, config=cfg,
                                   book=self.usage, now_ms=store.now_ms)
            self._tasks.append(asyncio.create_task(sampler.run(), name="usage sampler"))

    async def _maintain(self, store: Store, recorder: Recorder, metrics: TracerMetrics) -> None:
        while True:
            await asyncio.sleep(self.options.flush_seconds)
            try:
                store.maintain()
                metrics.update(store.status(), self.statuses, recorder.queue.qsize())
            except OSError:
                log.exception("store maintenance failed")

    async def run_until_signalled(self) -> None:
        await self.service.run_until_signalled()
        await self.stop()

    async def stop(self) -> None:
        await self.service.stop()
        for task in self._watchers:
            task.cancel()
        await asyncio.gather(*self._watchers, return_exceptions=True)
        if self.recorder is not None:
            while not self.recorder.queue.empty():  # record what was observed
                self.recorder.handle(self.recorder.queue.get_nowait())
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._release()

    async def _release(self) -> None:
        if self.store is not None:
            self.store.close()
            self.store = None
        if self._api is not None:
            with contextlib.suppress(Exception):
                await self._api.close()
            self._api = None
