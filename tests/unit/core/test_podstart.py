"""How long KWOK may take to start a pod, and the nudge that makes it look again."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from simkube.core import podstart
from simkube.core.kubeapi import MERGE_PATCH

pytestmark = pytest.mark.unit


def test_the_allowance_sums_the_delay_and_its_maximum() -> None:
    assert podstart.startup_allowance_s({podstart.STARTUP_DELAY: "5s",
                                         podstart.STARTUP_DELAY_MAX: "1500ms"}) == 6.5
    assert podstart.startup_allowance_s({podstart.STARTUP_DELAY: "2s"}) == 2.0


def test_no_or_unreadable_annotations_allow_nothing() -> None:
    assert podstart.startup_allowance_s(None) == 0.0
    assert podstart.startup_allowance_s({}) == 0.0
    # KWOK cannot read it either, so it starts the pod at once.
    assert podstart.startup_allowance_s({podstart.STARTUP_DELAY: "soon"}) == 0.0


class Recording:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, Any, str]] = []

    async def request(self, method: str, path: str, *, body: Any = None,
                      content_type: str = "", **_: Any) -> Mapping[str, Any]:
        self.calls.append((method, path, body, content_type))
        return {}


async def test_a_nudge_is_a_merge_patch_of_the_timestamp_annotation() -> None:
    kube = Recording()
    await podstart.nudge(kube, namespace="ns", name="p", when="2026-01-01T00:00:00.000Z")  # type: ignore[arg-type]
    assert kube.calls == [("PATCH", "/api/v1/namespaces/ns/pods/p",
                           {"metadata": {"annotations": {
                               podstart.NUDGE_ANNOTATION: "2026-01-01T00:00:00.000Z"}}},
                           MERGE_PATCH)]
