"""A window's writes, closed watches, etcd latency and scheduler figures from two scrapes."""

from __future__ import annotations

import pytest

from benchmarks.control_plane_metrics import Snapshot, counters, delta, window

pytestmark = pytest.mark.unit

APISERVER = """# TYPE apiserver_request_total counter
apiserver_request_total{{code="201",verb="POST",resource="pods",subresource=""}} {posts}
apiserver_request_total{{code="200",verb="PATCH",resource="pods",subresource="status"}} {patches}
apiserver_request_total{{code="200",verb="LIST",resource="pods",subresource=""}} 7
# TYPE apiserver_terminated_watchers_total counter
apiserver_terminated_watchers_total{{group="",resource="pods"}} {closed}
# TYPE etcd_request_duration_seconds histogram
etcd_request_duration_seconds_sum{{operation="create",type="/pods"}} {etcd_sum}
etcd_request_duration_seconds_count{{operation="create",type="/pods"}} {etcd_count}
"""
SCHEDULER = """# TYPE scheduler_schedule_attempts_total counter
scheduler_schedule_attempts_total{{profile="default-scheduler",result="scheduled"}} {ok}
# TYPE scheduler_framework_extension_point_duration_seconds histogram
scheduler_framework_extension_point_duration_seconds_sum{{extension_point="Bind"}} {bind}
scheduler_framework_extension_point_duration_seconds_count{{extension_point="Bind"}} {ok}
"""


def scrape(*, posts: int, patches: int, closed: int, etcd_sum: float, etcd_count: int,
           ok: int, bind: float) -> Snapshot:
    return Snapshot(apiserver=APISERVER.format(posts=posts, patches=patches, closed=closed,
                                               etcd_sum=etcd_sum, etcd_count=etcd_count),
                    scheduler=SCHEDULER.format(ok=ok, bind=bind))


def test_counters_sum_by_the_labels_asked_for() -> None:
    text = APISERVER.format(posts=3, patches=4, closed=0, etcd_sum=0, etcd_count=0)
    assert counters(text, "apiserver_request_total", ("verb",)) == {
        ("POST",): 3, ("PATCH",): 4, ("LIST",): 7}


def test_delta_keeps_what_changed() -> None:
    assert delta({("a",): 1.0, ("b",): 2.0}, {("a",): 1.0, ("b",): 5.0, ("c",): 1.0}) == {
        ("b",): 3.0, ("c",): 1.0}


def test_a_window_of_100_pods() -> None:
    before = scrape(posts=10, patches=10, closed=1, etcd_sum=1.0, etcd_count=100, ok=5,
                    bind=0.5)
    after = scrape(posts=110, patches=170, closed=4, etcd_sum=3.0, etcd_count=300, ok=105,
                   bind=10.5)
    figures = window(before, after, pods=100)
    assert figures["writes"] == {"PATCH/pods/status": 160, "POST/pods": 100}  # no LIST
    assert figures["writes_per_pod"] == {"PATCH/pods/status": 1.6, "POST/pods": 1.0}
    assert figures["terminated_watches"] == {"pods": 3}
    assert figures["etcd_mean_ms"] == {"create": 10.0}
    assert figures["scheduler_attempts"] == {"scheduled": 100}
    assert figures["scheduler_bind_mean_ms"] == 100.0


def test_no_binds_gives_no_mean() -> None:
    same = scrape(posts=1, patches=1, closed=0, etcd_sum=0, etcd_count=0, ok=0, bind=0)
    assert window(same, same, pods=10)["scheduler_bind_mean_ms"] is None
