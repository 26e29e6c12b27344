from __future__ import annotations

from typing import Any

import pytest

from simkube.trace import ObjectRef
from simkube.tracer.config import UsageSettings
from simkube.tracer.usage import (
    UsageBook,
    add_pod,
    pod_usage,
    reading_window,
    workload_root,
)

pytestmark = pytest.mark.unit
WEB = ObjectRef(api_version="apps/v1", kind="Deployment", namespace="shop", name="web")
RS = ObjectRef(api_version="apps/v1", kind="ReplicaSet", namespace="shop", name="web-7f")
POD = ObjectRef(api_version="v1", kind="Pod", namespace="shop", name="web-7f-x")


def metrics(*usages: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "p", "namespace": "shop"},
            "containers": [{"name": f"c{i}", "usage": usage} for i, usage in enumerate(usages)]}


def test_pod_usage_sums_containers_in_millicores_and_bytes() -> None:
    # metrics-server reports CPU in nanocores and memory in Ki
    found = pod_usage(metrics({"cpu": "250000000n", "memory": "1024Ki"},
                              {"cpu": "1", "memory": "1Mi"}))
    assert found == (1250, 2 * 2**20)
    assert pod_usage(metrics({"cpu": "1500u"})) == (2, 0)  # 1.5 m rounds to 2


@pytest.mark.parametrize("bad", [
    {}, {"containers": []}, {"containers": "x"}, {"containers": [{"usage": "x"}]},
    metrics({"cpu": "lots"}), metrics({"cpu": "-1"}), metrics({"memory": [1]}), "text",
])
def test_unreadable_metrics_are_skipped_not_guessed(bad: Any) -> None:
    assert pod_usage(bad) is None


def test_the_root_is_the_outermost_tracked_object_of_the_chain() -> None:
    deployments = {"apps/v1.Deployment"}
    assert workload_root(POD, (RS, WEB), lambda ref: ref.kind_key in deployments) == WEB
    assert workload_root(POD, (RS, WEB), lambda ref: ref.kind == "Pod") == POD
    assert workload_root(POD, (RS, WEB), lambda ref: False) is None


def test_the_book_keeps_bounded_series_and_re_times_a_window() -> None:
    book = UsageBook(UsageSettings(period_seconds=15, max_samples=3, max_series=1))
    for second in range(5):
        book.record(1000 * second, {WEB: (2, 100 * second, 10), POD: (1, 1, 1)})
    book.record(4000, {WEB: (9, 9, 9)})  # the same instant again: ignored
    assert len(book) == 1  # the second workload is over the limit
    (series,) = book.window(origin_ms=2500, end_ms=4000, keep=lambda ref: True)
    assert (series.kind, series.workload, series.period_ms) == (
        "apps/v1.Deployment", "shop/web", 15_000)
    assert [(s.t_ms, s.pods, s.cpu_millicores) for s in series.samples] == [
        (500, 2, 300), (1500, 2, 400)]  # the ring kept the last three: 2 s, 3 s, 4 s
    assert book.window(origin_ms=0, end_ms=10**6, keep=lambda ref: ref != WEB) == []
    assert book.window(origin_ms=10**5, end_ms=10**6, keep=lambda ref: True) == []


def test_a_round_sums_pods_per_workload() -> None:
    totals: dict[ObjectRef, tuple[int, int, int]] = {}
    for usage in ((250, 100), (750, 300)):
        add_pod(totals, WEB, usage)
    add_pod(totals, POD, (5, 1))
    assert totals == {WEB: (2, 1000, 400), POD: (1, 5, 1)}


@pytest.mark.parametrize(("stamp", "window", "expected"), [
    ("2026-11-26T10:00:15Z", "15s", (1_795_687_215_000, 15_000)),
    ("2026-11-26T10:00:15.5Z", "15.5s", (1_795_687_215_500, 15_500)),
    ("2026-11-26T11:00:15+01:00", "1m0.25s", (1_795_687_215_000, 60_250)),
])
def test_a_reading_has_its_window_end_and_length(stamp: str, window: str,
                                                 expected: tuple[int, int]) -> None:
    assert reading_window({"timestamp": stamp, "window": window}) == expected


@pytest.mark.parametrize("bad", [
    None, {}, {"timestamp": "2026-11-26T10:00:15Z"}, {"window": "15s"},
    {"timestamp": "yesterday", "window": "15s"}, {"timestamp": "2026-11-26T10:00:15Z",
                                                  "window": "15"},
    {"timestamp": "2026-11-26T10:00:15", "window": "15s"},  # no zone: not a Kubernetes time
    {"timestamp": 5, "window": "15s"}])
def test_a_reading_without_a_readable_window_has_no_time(bad: Any) -> None:
    assert reading_window(bad) is None
