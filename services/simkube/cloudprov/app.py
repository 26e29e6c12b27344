"""sk-cloudprov assembled: backing objects, watches, reconciler, scaler and the gRPC service.

Start-up order matters. The namespace and the infrastructure node come first (placeholder
pods need both), then the watches, and nothing is served until all three have listed: an
RPC answered from a half-filled index would tell Cluster Autoscaler that nodes are missing.
Missing group Deployments are created (at minSize) and waited for before serving, marks left
by a scale-down that never finished are withdrawn, and only then does the port open.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc

from simkube.cloudprov.config import CloudConfig
from simkube.cloudprov.current_run import CurrentRun
from simkube.cloudprov.index import ClusterIndex, Kind
from simkube.cloudprov.manifests import infra_node
from simkube.cloudprov.metrics import GroupGauges
from simkube.cloudprov.naming import GROUP_LABEL, MANAGED_BY_LABEL, MANAGER, OWNER_LABEL
from simkube.cloudprov.reconciling import Reconciler
from simkube.cloudprov.scaling import Scaler
from simkube.cloudprov.servicer import CloudProviderServicer
from simkube.cloudprov.watching import collection_watch
from simkube.core.errors import SimkubeError
from simkube.core.kubeapi import (
    DEPLOYMENTS,
    NAMESPACES,
    NODES,
    PODS,
    ApiError,
    KubeClient,
    ListWatch,
)
from simkube.core.logs import get_logger
from simkube.core.serving import Service, TlsConfig
from simkube.gen.clusterautoscaler.cloudprovider.v1.externalgrpc import externalgrpc_pb2 as pb
from simkube.gen.clusterautoscaler.cloudprovider.v1.externalgrpc import (
    externalgrpc_pb2_grpc as pb_grpc,
)

log = get_logger(__name__)
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["CloudProvider"].full_name


class StartupError(SimkubeError, exit_code=3):
    """The cluster did not let sk-cloudprov set up its groups."""


@dataclass(kw_only=True)
class CloudProvider:
    config: CloudConfig
    api: KubeClient
    listen: str = "127.0.0.1:8086"
    metrics_listen: str | None = None
    tls: TlsConfig | None = None
    grace: float = 5.0
    sync_timeout: float = 60.0
    service: Service = field(init=False)
    index: ClusterIndex = field(init=False)
    _tasks: list[asyncio.Task[None]] = field(init=False, default_factory=list)
    _scaler: Scaler | None = field(init=False, default=None)

    @property
    def port(self) -> int:
        return self.service.port

    async def start(self) -> None:
        try:
            await self._start()
        except BaseException:
            await self.stop()
            raise

    async def _start(self) -> None:
        config = self.config
        await self._create(NAMESPACES.path(), {
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": config.namespace}})
        await self._create(NODES.path(), infra_node(config.infra_node))
        self.index = index = ClusterIndex(groups=config.groups)
        ns = config.namespace
        watches = [
            self._watch(Kind.DEPLOYMENT, DEPLOYMENTS.path(namespace=ns),
                        f"{MANAGED_BY_LABEL}={MANAGER}"),
            self._watch(Kind.POD, PODS.path(namespace=ns), GROUP_LABEL),
            self._watch(Kind.NODE, NODES.path(), f"{OWNER_LABEL}={ns}"),
        ]
        await self._synced(watches)
        # The reconciler's first pass creates missing group Deployments (at minSize).
        current = CurrentRun()
        self._spawn(current.follow(api=self.api, namespace=ns))
        self._spawn(Reconciler(api=self.api, index=index, config=config,
                               current=current).run())
        await self._deployments()
        for group, state in index.groups.items():
            spec = config.groups[group]
            if state.replicas is not None and not spec.min_size <= state.replicas <= spec.max_size:
                log.warning("group size is outside the configured bounds; Cluster Autoscaler "
                            "will bring it back", group=group, replicas=state.replicas,
                            min_size=spec.min_size, max_size=spec.max_size)
            if spec.overrides.values and spec.provisioning.ready_after > 0:
                log.warning("this group overrides CA's options: CA's externalgrpc client then "
                            "reads its max node startup time as 0, counts a registered Node "
                            "that is not Ready yet as unready instead of upcoming, and may scale "
                            "up again during readyAfter (docs/cloudprov.md)", group=group,
                            ready_after=spec.provisioning.ready_after)
        self._scaler = scaler = Scaler(api=self.api, index=index, config=config,
                                       current=current)
        await scaler.recover()
        servicer = CloudProviderServicer(config=config, index=index, scaler=scaler,
                                         current=current)

        def register(server: grpc.aio.Server) -> Sequence[str]:
            pb_grpc.add_CloudProviderServicer_to_server(servicer, server)
            return [SERVICE_NAME]
        self.service = Service(name="sk-cloudprov", listen=self.listen,
                               metrics_listen=self.metrics_listen, tls=self.tls,
                               grace=self.grace)
        gauges = GroupGauges(registry=self.service.metrics.registry, index=index, config=config)
        self._spawn(gauges.run())
        await self.service.start(register)
        log.info("sk-cloudprov ready", groups=list(config.groups), namespace=ns,
                 port=self.service.port)

    def _spawn(self, work: Any) -> None:
        self._tasks.append(asyncio.create_task(work))

    def _watch(self, kind: Kind, path: str, selector: str) -> ListWatch:
        watch = collection_watch(
            api=self.api, path=path, selector=selector,
            on_list=lambda items: self.index.listed(kind, items),
            on_event=lambda event, obj: self.index.observed(kind, event, obj))
        self._spawn(watch.run())
        return watch

    async def _synced(self, watches: list[ListWatch]) -> None:
        try:
            async with asyncio.timeout(self.sync_timeout):
                await asyncio.gather(*(w.synced.wait() for w in watches))
        except TimeoutError:
            pending = [w.path for w in watches if not w.synced.is_set()]
            raise StartupError(f"could not list {', '.join(pending)} within "
                               f"{self.sync_timeout:.0f}s; is the API server reachable and "
                               f"does sk-cloudprov's account may list and watch them?") from None

    async def _create(self, path: str, body: dict[str, Any]) -> None:
        try:
            await self.api.request("POST", path, body=body)
        except ApiError as exc:
            if exc.code != 409:
                raise StartupError(f"cannot create {body['kind']} "
                                   f"{body['metadata']['name']}: {exc}") from None

    async def _deployments(self) -> None:
        groups = self.index.groups
        if not await self.index.wait_until(
                lambda: all(s.replicas is not None for s in groups.values()),
                timeout=self.sync_timeout):
            missing = [g for g, s in groups.items() if s.replicas is None]
            raise StartupError(f"the Deployments of node groups {', '.join(missing)} were not "
                               f"created in namespace {self.config.namespace} (see the log)")

    async def stop(self) -> None:
        if hasattr(self, "service"):
            await self.service.stop()
        if self._scaler is not None:
            await self._scaler.close()
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            _, stuck = await asyncio.wait(self._tasks, timeout=self.grace + 5)
            if stuck:  # a bug, but shutting down must not hang on it
                log.error("tasks ignored cancellation", tasks=[t.get_name() for t in stuck])
        self._tasks.clear()
