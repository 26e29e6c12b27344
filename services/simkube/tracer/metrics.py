"""Prometheus gauges for what the tracer holds and how each watch is doing.

The metrics HTTP server scrapes from its own thread while the store changes on the event
loop, so values are copied into thread-safe gauges by the loop (``update``, once a second)
instead of being computed during a scrape.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Gauge

from simkube.tracer.status import KindStatus
from simkube.tracer.store import StoreStatus


class TracerMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        def gauge(name: str, text: str, labels: tuple[str, ...] = ()) -> Gauge:
            return Gauge(f"sk_tracer_{name}", text, labels, registry=registry)

        self.store_bytes = gauge("store_bytes", "Bytes on disk in the store")
        self.store_events = gauge("store_events", "Events retained in the store")
        self.segments = gauge("store_segments", "Segments in the store")
        self.live_objects = gauge("live_objects", "Objects that exist now, as recorded")
        self.queue = gauge("queue_depth", "Observations waiting to be recorded")
        self.events = gauge("kind_events_stored", "Events retained per kind", ("kind",))
        self.resyncs = gauge("kind_resyncs", "Re-lists since start per kind", ("kind",))
        self.state = gauge("kind_watch_state", "WatchState enum value per kind", ("kind",))

    def update(self, store: StoreStatus, statuses: list[KindStatus], queue_depth: int) -> None:
        self.store_bytes.set(store.bytes)
        self.store_events.set(store.events)
        self.segments.set(store.segments)
        self.live_objects.set(store.live_objects)
        self.queue.set(queue_depth)
        for status in statuses:
            self.events.labels(status.kind).set(store.events_by_kind.get(status.kind, 0))
            self.resyncs.labels(status.kind).set(status.resyncs)
            self.state.labels(status.kind).set(int(status.state))
