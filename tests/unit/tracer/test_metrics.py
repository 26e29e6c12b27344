from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from simkube.tracer.metrics import TracerMetrics
from simkube.tracer.status import KindStatus, WatchState
from simkube.tracer.store import StoreStatus

pytestmark = pytest.mark.unit


def test_gauges_follow_store_and_watches() -> None:
    registry = CollectorRegistry()
    metrics = TracerMetrics(registry)
    store = StoreStatus(bytes=2048, events=10, segments=2, oldest_ts=1, newest_ts=2,
                        events_by_kind={"v1.Pod": 7}, live_objects=3)
    metrics.update(store, [KindStatus(kind="v1.Pod", state=WatchState.BACKOFF, resyncs=4)], 5)
    text = generate_latest(registry).decode()
    for line in ('sk_tracer_store_bytes 2048.0', 'sk_tracer_queue_depth 5.0',
                 'sk_tracer_kind_events_stored{kind="v1.Pod"} 7.0',
                 'sk_tracer_kind_resyncs{kind="v1.Pod"} 4.0',
                 'sk_tracer_kind_watch_state{kind="v1.Pod"} 3.0',
                 'sk_tracer_live_objects 3.0', 'sk_tracer_store_segments 2.0'):
        assert line in text
