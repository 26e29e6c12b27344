"""Simulations listed then watched into the reconciler; listed again when the watch expires,
resumed when the connection breaks, retried when the list is refused."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any, cast

import pytest

from simkube.core.kubeapi import ApiError, GoneError, KubeClient
from simkube.ctrl import watching
from simkube.simulation.names import SIMULATIONS_PATH
from tests.support.fake_api import FakeApi
from tests.unit.ctrl.fakes import simulation

pytestmark = pytest.mark.unit


class Sink:
    def __init__(self) -> None:
        self.replaced: list[list[str]] = []
        self.applied: list[tuple[str, str]] = []

    def replace(self, simulations: Iterable[dict[str, Any]]) -> None:
        self.replaced.append([s["metadata"]["name"] for s in simulations])

    def apply(self, kind: str, simulation: dict[str, Any]) -> None:
        self.applied.append((kind, simulation["metadata"]["name"]))


async def until(probe: Any) -> None:
    for _ in range(300):
        if probe():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("never happened")


@pytest.fixture(autouse=True)
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(watching, "RETRY_DELAY_S", 0.01)


async def run(api: FakeApi, sink: Sink) -> asyncio.Task[None]:
    return asyncio.create_task(watching.watch_simulations(cast(KubeClient, api), sink))


async def test_list_then_watch_then_list_again_when_gone() -> None:
    api = FakeApi(lists={SIMULATIONS_PATH: [simulation("a"), simulation("b")]})
    api.fail_watch(SIMULATIONS_PATH, GoneError(code=410, reason="Gone", message="too old"))
    sink = Sink()
    task = await run(api, sink)
    await until(lambda: len(sink.replaced) == 2)  # listed, gone, listed again
    api.send(SIMULATIONS_PATH, "ADDED", simulation("c"))
    api.send(SIMULATIONS_PATH, "BOOKMARK", {"metadata": {"resourceVersion": "9"}})
    api.send(SIMULATIONS_PATH, "DELETED", simulation("a"))
    await until(lambda: len(sink.applied) == 2)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert sink.replaced == [["a", "b"], ["a", "b"]]
    assert sink.applied == [("ADDED", "c"), ("DELETED", "a")]


async def test_a_broken_connection_resumes_without_listing_again() -> None:
    api = FakeApi(lists={SIMULATIONS_PATH: [simulation("a")]})
    api.fail_watch(SIMULATIONS_PATH, ApiError(code=0, reason="Disconnected", message="eof"))
    sink = Sink()
    task = await run(api, sink)
    await until(lambda: api.requests.count(("WATCH", SIMULATIONS_PATH)) == 2)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert sink.replaced == [["a"]]


async def test_a_refused_list_is_tried_again() -> None:
    api = FakeApi(lists={SIMULATIONS_PATH: [simulation("a")]})
    api.fail("GET", SIMULATIONS_PATH, ApiError(code=503, reason="Unavailable", message="x"))
    sink = Sink()
    task = await run(api, sink)
    await until(lambda: sink.replaced)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert api.requests.count(("GET", SIMULATIONS_PATH)) == 2
