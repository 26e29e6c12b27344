"""Provisioning and readiness on a replay's clock, against the real cluster and KWOK.

sk-ctrl publishes the hold in progress in the run ConfigMap; sk-cloudprov watches it and
creates and readies no Node while it is on, then moves its deadlines back by the hold. The
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
        "data": {RunKey.SPEED: "1.0", RunKey.SEED: "1", RunKey.RUN: run,
                 RunKey.HOLDING: f"{round(began * 1000)}-{round((began + 60) * 1000)}"}})
    await asyncio.sleep(0.5)  # the watch has it
    return CONFIG_MAPS.path(namespace=harness.namespace, name=RUN_CONFIGMAP), began


async def test_no_node_comes_or_turns_ready_during_a_hold(harness: Harness) -> None:
    group = f"held-{harness.suffix}"
    await harness.start([shape_group(group)], provisioning={"delay": "0s", "readyAfter": "1s"})
    path, began = await run_held(harness, run="held-r1")
    await harness.stub.NodeGroupIncreaseSize(pb.NodeGroupIncreaseSizeRequest(id=group, delta=1))
    await asyncio.sleep(2.0)  # no delay to wait for, but the run's clock stands still
    assert await harness.nodes() == {}

    ended = time.time()
    await merge_patch(harness.api, path, {"data": {
        RunKey.HOLDS: f"{round(began * 1000)}-{round(ended * 1000)}", RunKey.HOLDING: ""}})

    async def registered() -> dict[str, Any] | None:
        nodes = await harness.nodes()
        return next(iter(nodes.values()), None)
    node = await eventually(registered, timeout=WAIT, what="the node, once the hold ended")
    assert not ready(node)  # readyAfter 1 s: registered NotReady, waiting for sk-cloudprov

    async def readied() -> dict[str, Any] | None:
        current = (await harness.nodes())[node["metadata"]["name"]]
        return current if ready(current) else None
    current = await eventually(readied, timeout=WAIT, what="the node Ready")
    assert time.time() - ended >= 1.0
    assert current["metadata"]["annotations"][READY_AFTER_ANNOTATION] == READY_NOW
    await harness.running(group, 1)
