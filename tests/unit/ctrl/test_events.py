"""Events about a Simulation: where kubectl finds them, never failing the simulation."""

from __future__ import annotations

from typing import cast

import pytest

from simkube.core.kubeapi import ApiError, KubeClient
from simkube.ctrl.events import MAX_MESSAGE, emit, event_body
from tests.support.fake_api import FakeApi
from tests.unit.ctrl.fakes import EVENTS, simulation

pytestmark = pytest.mark.unit


def test_the_event_points_at_the_simulation() -> None:
    body = event_body(simulation(), reason="RunStarted", message="m", warning=True)
    assert body["metadata"] == {"generateName": "shop.", "namespace": "default"}
    assert body["involvedObject"] == {"apiVersion": "simkube.dev/v1alpha1",
                                      "kind": "Simulation", "name": "shop", "uid": "uid-shop",
                                      "resourceVersion": "7"}
    assert (body["type"], body["reason"], body["source"]) == (
        "Warning", "RunStarted", {"component": "sk-ctrl"})
    assert event_body(simulation(), reason="R", message="x" * 5000)["message"] == (
        "x" * MAX_MESSAGE)


async def test_emit_posts_the_event() -> None:
    api = FakeApi()
    await emit(cast(KubeClient, api), simulation(), reason="Paused", message="paused")
    (posted,) = api.sent("POST", EVENTS)
    assert (posted["type"], posted["reason"], posted["message"]) == ("Normal", "Paused",
                                                                     "paused")


async def test_an_event_that_cannot_be_written_is_dropped() -> None:
    api = FakeApi()
    api.fail("POST", EVENTS, ApiError(code=403, reason="Forbidden", message="rbac"))
    await emit(cast(KubeClient, api), simulation(), reason="Paused", message="paused")
    assert api.requests == [("POST", EVENTS)]
