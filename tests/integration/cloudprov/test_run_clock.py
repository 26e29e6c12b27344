"""Provisioning and readiness on a replay's clock, against the real cluster and KWOK.

sk-ctrl publishes the hold in progress in the run ConfigMap; sk-cloudprov watches it and lets
its deadlines pass at real time while it is on (a quarter of the pace at speed 4), then moves
them back by the hold's slip. The
Node turns Ready by KWOK's node-ready stage once sk-cloudprov sets its ready-after
annotation, not by a delay KWOK counts on the wall clock.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from simkube.cloudprov.naming import READY_AFTER_ANNOTATION, READY_NOW
from simkube.core.kubeapi import CONFIG_MAPS, merge_patch
from simkube.gen.clusterautoscaler.cloudprovider.v1.externalgrpc import externalgrpc_pb2 as pb
from simkube.simulation.run_configmap import RUN_CONFIGMAP, RunKey
from tests.integration.cloudprov.conftest import WAIT, Harness
from tests.integration.cloudprov.test_scaling import shape_group
from tests.support.kube import eventually

pytestmark = pytest.mark.integration


def ready(node: dict[str, Any]) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (node.get("status") or {}).get("conditions") or [])


async def run_held(harness: Harness, *, run: str) -> tuple[str, float]:
    """A run's ConfigMap with a hold in progress from now; its path and the hold's start."""
    began = time.time()
    await harness.api.request("POST", CONFIG_MAPS.path(namespace=harness.namespace), body={
        "metadata": {"name": RUN_CONFIGMAP},
        "data": {RunKey.SPEED: "4.0", RunKey.SEED: "1", RunKey.RUN: run,
                 RunKey.HOLDING: f"{round(began * 1000)}-{round((began + 60) * 1000)}"}})
    await asyncio.sleep(0.5)  # the watch has it
    return CONFIG_MAPS.path(namespace=harness.namespace, name=RUN_CONFIGMAP), began


async def test_a_node_comes_and_turns_ready_at_real_time_during_a_hold(
        harness: Harness) -> None:
    group = f"held-{harness.suffix}"
    # At speed 4: 0.5 s and 1 s of wall time at the run's pace, 2 s and 4 s held.
    await harness.start([shape_group(group)], provisioning={"delay": "2s", "readyAfter": "4s"})
    path, began = await run_held(harness, run="held-r1")
    requested = time.time()
    await harness.stub.NodeGroupIncreaseSize(pb.NodeGroupIncreaseSizeRequest(id=group, delta=1))
    await asyncio.sleep(1.0)  # twice the unheld delay
    assert await harness.nodes() == {}

    async def registered() -> dict[str, Any] | None:
        nodes = await harness.nodes()
        return next(iter(nodes.values()), None)
    node = await eventually(registered, timeout=WAIT, what="the node, during the hold")
    assert time.time() - requested >= 1.8  # the 2 s delay at real time
    assert not ready(node)  # registered NotReady, waiting for sk-cloudprov

    ended = time.time()
    await merge_patch(harness.api, path, {"data": {
        RunKey.HOLDS: f"{round(began * 1000)}-{round(ended * 1000)}", RunKey.HOLDING: ""}})

    async def readied() -> dict[str, Any] | None:
        current = (await harness.nodes())[node["metadata"]["name"]]
        return current if ready(current) else None
    current = await eventually(readied, timeout=WAIT, what="the node Ready")
    # 1.5 s at the run's pace from the request, moved back by three quarters of the hold.
    assert time.time() - requested >= 1.5 + 0.75 * (ended - requested) - 0.2
    assert current["metadata"]["annotations"][READY_AFTER_ANNOTATION] == READY_NOW
    await harness.running(group, 1)
