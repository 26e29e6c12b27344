"""The sampler's rounds: what it sums and when it says the usage was."""

from __future__ import annotations

from typing import Any

import pytest

from simkube.core.kubeapi import Discovery, Resource
from simkube.tracer.config import UsageSettings, parse_config
from simkube.tracer.owners import OwnerResolver
from simkube.tracer.usage import UsageBook
from simkube.tracer.usage_sampling import UsageSampler
from tests.unit.tracer.conftest import obj
from tests.unit.tracer.fakes import FakeApi

pytestmark = pytest.mark.unit
PODMETRICS = Resource(group="metrics.k8s.io", version="v1beta1", kind="PodMetrics",
                      plural="pods", namespaced=True)
NOW_MS = 1_795_687_230_000  # 10:00:30Z


def reading(name: str, *, cpu: str, stamp: str | None = "2026-11-26T10:00:15Z",
            window: str = "15s") -> dict[str, Any]:
    found: dict[str, Any] = {"metadata": {"name": name, "namespace": "ns"},
                             "window": window,
                             "containers": [{"name": "c", "usage": {"cpu": cpu,
                                                                    "memory": "1Mi"}}]}
    if stamp is not None:
        found["timestamp"] = stamp
    return found


def sampler(api: FakeApi, book: UsageBook, *, started: dict[str, str] | None = None,
            tracked: str = "v1.Pod") -> UsageSampler:
    config = parse_config({"trackedObjects": {tracked: {}}, "namespaces": ["ns"]}, source="t")
    for name in ("web", "db", "web-2", "web-3"):
        status = {"startTime": (started or {})[name]} if name in (started or {}) else {}
        api.objects[f"/api/v1/namespaces/ns/pods/{name}"] = obj(
            "v1.Pod", name, status=status, metadata={"labels": {"app": "web"}})
    discovery = Discovery(api)  # type: ignore[arg-type]
    return UsageSampler(api=api, discovery=discovery,  # type: ignore[arg-type]
                        owners=OwnerResolver(api, discovery),  # type: ignore[arg-type]
                        config=config, book=book, now_ms=lambda: NOW_MS)


def recorded(book: UsageBook) -> list[tuple[str, int, int]]:
    return [(series.name, sample.t_ms, sample.cpu_millicores)
            for series in book.window(origin_ms=0, end_ms=NOW_MS, keep=lambda ref: True)
            for sample in series.samples]


async def test_a_round_is_stamped_when_metrics_server_took_its_readings() -> None:
    api, book = FakeApi(), UsageBook(UsageSettings())
    api.objects[PODMETRICS.path()] = {"items": [
        reading("web", cpu="250m"), reading("db", cpu="1", stamp="2026-11-26T10:00:16Z")]}
    await sampler(api, book).sample(PODMETRICS)
    # the latest reading of the round (10:00:16Z), not the time it was read (10:00:30Z)
    assert recorded(book) == [("db", NOW_MS - 14_000, 1000), ("web", NOW_MS - 14_000, 250)]


async def test_reading_the_same_scrape_again_adds_no_sample() -> None:
    api, book = FakeApi(), UsageBook(UsageSettings())
    api.objects[PODMETRICS.path()] = {"items": [reading("web", cpu="250m")]}
    sampling = sampler(api, book)
    await sampling.sample(PODMETRICS)
    await sampling.sample(PODMETRICS)
    api.objects[PODMETRICS.path()] = {"items": [
        reading("web", cpu="300m", stamp="2026-11-26T10:00:30Z")]}
    await sampling.sample(PODMETRICS)
    assert recorded(book) == [("web", NOW_MS - 15_000, 250), ("web", NOW_MS, 300)]
    assert sampling.rounds == 3


async def test_readings_without_a_window_or_from_the_future_fall_back_to_the_read_time(
        ) -> None:
    api, book = FakeApi(), UsageBook(UsageSettings())
    api.objects[PODMETRICS.path()] = {"items": [reading("web", cpu="250m", stamp=None)]}
    await sampler(api, book).sample(PODMETRICS)
    api.objects[PODMETRICS.path()] = {"items": [
        reading("db", cpu="1", stamp="2026-11-26T10:05:00Z")]}  # a node clock ahead
    await sampler(api, book).sample(PODMETRICS)
    assert recorded(book) == [("db", NOW_MS, 1000), ("web", NOW_MS, 250)]


def web_pods(api: FakeApi) -> None:
    """web, web-2 and web-3 are pods of one bare ReplicaSet (the tracked workload root)."""
    api.objects["/apis/apps/v1/namespaces/ns/replicasets/web"] = obj(
        "apps/v1.ReplicaSet", "web", metadata={"uid": "uid-web"})
    for name in ("web", "web-2", "web-3"):
        api.objects[f"/api/v1/namespaces/ns/pods/{name}"]["metadata"]["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "uid-web",
             "controller": True}]


async def test_pods_that_started_before_their_first_reading_are_counted_in() -> None:
    api, book = FakeApi(), UsageBook(UsageSettings())
    sampling = sampler(api, book, tracked="apps/v1.ReplicaSet", started={
        "web": "2026-11-26T09:50:00Z", "web-2": "2026-11-26T10:00:05Z",
        "web-3": "2026-11-26T10:00:05Z"})
    web_pods(api)
    api.objects[PODMETRICS.path()] = {"items": [reading("web", cpu="600m")]}  # 10:00:15Z
    await sampling.sample(PODMETRICS)
    api.objects[PODMETRICS.path()] = {"items": [  # web-2 and web-3 report at 10:00:30Z
        reading("web", cpu="200m", stamp="2026-11-26T10:00:30Z"),
        reading("web-2", cpu="200m", stamp="2026-11-26T10:00:30Z"),
        reading("web-3", cpu="200m", stamp="2026-11-26T10:00:30Z")]}
    await sampling.sample(PODMETRICS)
    (series,) = book.window(origin_ms=0, end_ms=NOW_MS, keep=lambda ref: True)
    # web-2 and web-3 ran at 10:00:15Z without a reading: counted in at web's 600m each
    assert [(s.pods, s.cpu_millicores) for s in series.samples] == [(3, 1800), (3, 600)]


async def test_a_pod_long_known_is_not_counted_in_again() -> None:
    api, book = FakeApi(), UsageBook(UsageSettings())
    sampling = sampler(api, book, tracked="apps/v1.ReplicaSet", started={
        "web": "2026-11-26T09:50:00Z", "web-2": "2026-11-26T09:50:00Z"})
    web_pods(api)
    api.objects[PODMETRICS.path()] = {"items": [reading("web", cpu="600m"),
                                                reading("web-2", cpu="600m")]}
    await sampling.sample(PODMETRICS)
    fresh = sampler(api, book, tracked="apps/v1.ReplicaSet", started={
        "web": "2026-11-26T09:50:00Z", "web-2": "2026-11-26T09:50:00Z"})  # a cold cache
    web_pods(api)
    api.objects[PODMETRICS.path()] = {"items": [
        reading("web", cpu="500m", stamp="2026-11-26T10:00:30Z"),
        reading("web-2", cpu="500m", stamp="2026-11-26T10:00:30Z")]}
    await fresh.sample(PODMETRICS)
    (series,) = book.window(origin_ms=0, end_ms=NOW_MS, keep=lambda ref: True)
    assert [(s.pods, s.cpu_millicores) for s in series.samples] == [(2, 1200), (2, 1000)]
