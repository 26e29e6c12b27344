"""Sampling ``metrics.k8s.io`` PodMetrics every period into the usage book.

Only a cluster running a metrics pipeline (metrics-server, or anything else serving the
``metrics.k8s.io`` API) can say what pods use; elsewhere the sampler logs once that the API is
not served and records nothing, and the tracer records objects as before. Each round lists
every PodMetrics (one request), keeps the pods whose owner chain reaches a tracked, in-scope
object and sums them per workload root. A pod's root is looked up once (a GET of the pod,
then the owner resolver's cached chain) and remembered by namespace and name in a bounded
LRU, so a steady cluster costs one request per period.

A round is stamped with the time metrics-server took its readings (``reading_window``: the
latest among its pods, never later than the tracer's clock), not the time the tracer read
them; rounds that read the same scrape again carry the same stamp and are dropped by
the book, so sampling faster than metrics-server's resolution costs no trace space.

A workload's sample is its total load, and a pod that has just started uses CPU before
metrics-server can say so (its first rate comes at its second scrape, up to two resolutions
later). Summing only the pods that reported would record half the load just after an HPA
doubled a workload, and a replay, which spreads the total over its running pods, would play
half the load then and scale late. So when a pod reports for the first time, the samples
stamped since it started count it in at their average per pod (``UsageBook.count_in``).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable

from simkube.core.kubeapi import (
    PODS,
    ApiError,
    Discovery,
    KindNotServedError,
    KubeClient,
    Resource,
)
from simkube.core.logs import get_logger
from simkube.trace import ObjectRef
from simkube.tracer.config import TracerConfig
from simkube.tracer.owners import OwnerResolver
from simkube.tracer.units import rfc3339_ms
from simkube.tracer.usage import (
    Totals,
    UsageBook,
    add_pod,
    pod_usage,
    reading_window,
    workload_root,
)

log = get_logger(__name__)
METRICS_API = "metrics.k8s.io/v1beta1"
# A pod first read within this many windows of its start is new: metrics-server has its first
# rate at its second scrape, so the samples since its start counted it out (``count_in``).
# A pod looked up again long after its start (the root cache evicted it, the tracer restarted)
# was counted all along.
NEW_POD_WINDOWS = 3
_NO_ROOT = ObjectRef(api_version="", kind="", namespace="", name="")  # cached "not tracked"


class UsageSampler:
    def __init__(self, *, api: KubeClient, discovery: Discovery, owners: OwnerResolver,
                 config: TracerConfig, book: UsageBook, now_ms: Callable[[], int],
                 cache_size: int = 50_000) -> None:
        self._api = api
        self._discovery = discovery
        self._owners = owners
        self._config = config
        self._book = book
        self._now_ms = now_ms
        self._roots: OrderedDict[tuple[str, str], ObjectRef] = OrderedDict()
        self._started: dict[tuple[str, str], int] = {}  # pods looked up this round: start
        self._cache_size = cache_size
        self.rounds = 0

    async def served(self) -> Resource | None:
        """The PodMetrics resource, or ``None`` (logged once) when the cluster has none."""
        try:
            return await self._discovery.resource(api_version=METRICS_API, kind="PodMetrics")
        except KindNotServedError:
            log.info("usage: the cluster does not serve metrics.k8s.io; recording no usage",
                     api=METRICS_API)
            return None

    async def run(self) -> None:
        resource = await self.served()
        if resource is None:
            return
        period = self._book.settings.period_seconds
        log.info("usage: sampling PodMetrics", period_seconds=period)
        loop = asyncio.get_running_loop()
        while True:
            started = loop.time()
            try:
                await self.sample(resource)
            except ApiError as exc:  # the metrics API may be down for a while: skip a round
                log.warning("usage: sampling failed; trying again next period", error=str(exc))
            await asyncio.sleep(max(0.0, period - (loop.time() - started)))

    async def sample(self, resource: Resource) -> None:
        """One round: list every PodMetrics, sum per workload root, record at one instant."""
        listed = await self._api.request("GET", resource.path())
        now = self._now_ms()
        totals: dict[ObjectRef, Totals] = {}
        ends: list[int] = []
        newcomers: list[tuple[ObjectRef, int]] = []
        for item in listed.get("items") or []:
            metadata = item.get("metadata") if isinstance(item, dict) else None
            namespace = (metadata or {}).get("namespace")
            name = (metadata or {}).get("name")
            usage = pod_usage(item)
            if not isinstance(namespace, str) or not isinstance(name, str) or usage is None:
                continue
            root = await self.root_of(namespace, name)
            started = self._started.pop((namespace, name), None)
            if root is None:
                continue
            add_pod(totals, root, usage)
            window = reading_window(item)
            if window is None:
                continue
            ends.append(window[0])
            if started is not None and window[0] - started <= NEW_POD_WINDOWS * window[1]:
                newcomers.append((root, started))
        stamp = min(max(ends, default=now), now)
        for root, started in newcomers:
            self._book.count_in(root, since_ms=started, before_ms=stamp)
        self._book.record(stamp, totals)
        self.rounds += 1

    async def root_of(self, namespace: str, name: str) -> ObjectRef | None:
        """The workload root of pod ``namespace/name`` if it is tracked (cached)."""
        key = (namespace, name)
        known = self._roots.get(key)
        if known is not None:
            self._roots.move_to_end(key)
            return None if known is _NO_ROOT else known
        try:
            pod = await self._api.request("GET", PODS.path(namespace=namespace, name=name))
        except ApiError as exc:
            if exc.code == 404:
                return None  # gone since the metrics were taken: not cached, names recur
            raise
        started = rfc3339_ms((pod.get("status") or {}).get("startTime"))
        if started is not None:
            self._started[key] = started  # taken (and dropped) by the round that asked
        ref = ObjectRef(api_version="v1", kind="Pod", namespace=namespace, name=name)
        root = workload_root(ref, await self._owners.ancestors(pod), self._tracked)
        self._roots[key] = _NO_ROOT if root is None else root
        if len(self._roots) > self._cache_size:
            self._roots.popitem(last=False)
        return root

    def _tracked(self, ref: ObjectRef) -> bool:
        kind = self._config.kind(ref.kind_key)
        return kind is not None and kind.in_scope(ref.namespace)
