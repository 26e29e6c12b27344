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


def sampler(api: FakeApi, book: UsageBook) -> UsageSampler:
    config = parse_config({"trackedObjects": {"v1.Pod": {}}, "namespaces": ["ns"]}, source="t")
    for name in ("web", "db"):
        api.objects[f"/api/v1/namespaces/ns/pods/{name}"] = obj("v1.Pod", name)
    discovery = Discovery(api)  # type: ignore[arg-type]
    return UsageSampler(api=api, discovery=discovery,  # type: ignore[arg-type]
                        owners=OwnerResolver(api, discovery),  # type: ignore[arg-type]
                        config=config, book=book, now_ms=lambda: NOW_MS)


def recorded(book: UsageBook) -> list[tuple[str, int, int]]:
    return [(series.name, sample.t_ms, sample.cpu_millicores)
            for series in book.window(origin_ms=0, end_ms=NOW_MS, keep=lambda ref: True)
            for sample in series.samples]


async def test_a_round_is_stamped_in_the_middle_of_its_readings_window() -> None:
    api, book = FakeApi(), UsageBook(UsageSettings())
    api.objects[PODMETRICS.path()] = {"items": [
        reading("web", cpu="250m"), reading("db", cpu="1", stamp="2026-11-26T10:00:16Z")]}
    await sampler(api, book).sample(PODMETRICS)
    # the latest window middle of the round (10:00:08.5Z), not the read time (10:00:30Z)
    assert recorded(book) == [("db", NOW_MS - 21_500, 1000), ("web", NOW_MS - 21_500, 250)]


async def test_reading_the_same_scrape_again_adds_no_sample() -> None:
    api, book = FakeApi(), UsageBook(UsageSettings())
    api.objects[PODMETRICS.path()] = {"items": [reading("web", cpu="250m")]}
    sampling = sampler(api, book)
    await sampling.sample(PODMETRICS)
    await sampling.sample(PODMETRICS)
    api.objects[PODMETRICS.path()] = {"items": [
        reading("web", cpu="300m", stamp="2026-11-26T10:00:30Z")]}
    await sampling.sample(PODMETRICS)
    assert recorded(book) == [("web", NOW_MS - 22_500, 250), ("web", NOW_MS - 7_500, 300)]
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
