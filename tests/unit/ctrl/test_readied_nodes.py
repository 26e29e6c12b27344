"""Which node changes count as a step towards taking pods: each, once, from watch events."""

from __future__ import annotations

from typing import Any

import pytest

from simkube.ctrl.readied_nodes import ReadiedNodesWatch, readiness
from tests.support.fake_api import FakeApi

pytestmark = pytest.mark.unit


def node(name: str, *, held: str | None = "876000h", ready: bool = False,
         tainted: bool = True) -> dict[str, Any]:
    annotations = {} if held is None else {"simkube.dev/ready-after": held}
    taints = [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}] if tainted else []
    return {"metadata": {"name": name, "annotations": annotations},
            "spec": {"taints": taints},
            "status": {"conditions": [{"type": "Ready", "status": str(ready)}]}}


def test_readiness_reads_the_three_steps() -> None:
    assert readiness(node("n")) == (False, False, False)
    assert readiness(node("n", held="0s", ready=True, tainted=False)) == (True, True, True)
    assert readiness(node("n", held=None)) == (True, False, False)  # not sk-cloudprov's


def test_each_step_of_a_watched_node_counts_once() -> None:
    steps: list[int] = []
    watch = ReadiedNodesWatch(kube=FakeApi(), on_step=lambda: steps.append(1))  # type: ignore[arg-type]
    watch._listed([node("old", held="0s", ready=True, tainted=False), node("new")])
    assert steps == []  # a list only learns where they stand
    watch._changed("MODIFIED", node("old", held="0s", ready=True, tainted=False))  # heartbeat
    watch._changed("MODIFIED", node("new"))
    assert steps == []
    watch._changed("MODIFIED", node("new", held="0s"))  # sk-cloudprov readied it
    watch._changed("MODIFIED", node("new", held="0s", ready=True))  # KWOK: Ready
    watch._changed("MODIFIED", node("new", held="0s", ready=True, tainted=False))  # untainted
    watch._changed("MODIFIED", node("new", held="0s", ready=True, tainted=False))
    assert len(steps) == 3
    watch._changed("ADDED", node("held"))  # a new sk-cloudprov node: not ready to take pods
    watch._changed("ADDED", node("plain", held=None))  # a node nothing holds: a step
    assert len(steps) == 4
    watch._changed("DELETED", node("plain", held=None))
    watch._changed("ADDED", node("plain", held=None))  # back again: a new node
    assert len(steps) == 5
