"""Prometheus gauges of every group's size, beside the RPC metrics of ``core.serving``.

Prometheus scrapes from the HTTP server's thread while the event loop changes the index, so
the gauges are not computed at scrape time: a task on the loop copies the index's per-phase
counts (kept as instances change) every ``interval`` seconds; ``Gauge.set`` is thread-safe.
"""

from __future__ import annotations

import asyncio

from prometheus_client import CollectorRegistry, Gauge

from simkube.cloudprov.config import CloudConfig
from simkube.cloudprov.index import ClusterIndex, Phase


class GroupGauges:
    def __init__(self, *, registry: CollectorRegistry, index: ClusterIndex,
                 config: CloudConfig) -> None:
        self._index = index
        self._config = config
        self.target = Gauge("sk_cloudprov_node_group_target_size",
                            "Desired size (Deployment replicas) of each node group", ("group",),
                            registry=registry)
        self.instances = Gauge("sk_cloudprov_node_group_instances",
                               "Instances of each node group by state", ("group", "state"),
                               registry=registry)
        self.min_size = Gauge("sk_cloudprov_node_group_min_size", "Configured minimum size",
                              ("group",), registry=registry)
        self.max_size = Gauge("sk_cloudprov_node_group_max_size", "Configured maximum size",
                              ("group",), registry=registry)
        for group in config.groups.values():
            self.min_size.labels(group.id).set(group.min_size)
            self.max_size.labels(group.id).set(group.max_size)

    def refresh(self) -> None:
        for group, state in self._index.groups.items():
            self.target.labels(group).set(state.replicas if state.replicas is not None else 0)
            for phase in Phase:
                self.instances.labels(group, phase.value).set(state.counts[phase])

    async def run(self, *, interval: float = 2.0) -> None:
        while True:
            self.refresh()
            await asyncio.sleep(interval)
