"""Pods bound to a Node created a moment before must start (issues #18 and #26).

KWOK handles a pod's event only once its node controller knows the pod's node; a pod whose
event comes first is skipped ("not managed") and must be picked up by KWOK's list of the
node's pods when it starts managing the node. That list never ran in the environment before
issue #26 (KWOK 0.8.0 applies no defaults to a configuration file, and ours left its worker
count at 0), so each such pod stayed Pending (no IP) until KWOK's pod watch happened to
re-list, minutes later: 13 of 3,582 pods in this test's shape. docs/kwok.md has the whole
story and the figures.

This replays the burst on the environment as users run it: 60 rounds, each creating 10-30
fake nodes at once and binding three pods to each of them (``spec.nodeName``) in the same
instant, two rounds at a time. Seed 26 binds 3,582 pods to 1,194 brand-new nodes; about 1 in
250 of them reaches KWOK before its node does, and at a loss of 1 in 1,000 pods 97 % of runs
would fail. Every pod must be Running within 60 s.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field

import pytest
from kubernetes_asyncio import client

from tests.support.kube import FAKE_TOLERATION

pytestmark = pytest.mark.e2e
ROUNDS = 60
NODES_PER_ROUND = (10, 30)
PODS_PER_NODE = 3
AT_ONCE = 2  # rounds in flight together
SEED = 26
# Seconds; an unstarted pod after this is the bug. A round normally runs in 1-3 s, but a pod
# that KWOK must re-list waits for its node to get through KWOK's one node preprocess worker,
# busy with a thousand nodes' heartbeats: 11.4 s once on this 2-core machine, and 25.3 s with
# three other sessions' builds and environments on it (load average 9-21). A lost pod waits
# for KWOK's pod watch to re-list, 5-10 minutes, so 60 s still tells the two apart.
START_WITHIN = 60.0
POLL_S = 0.25


def fake_node(name: str) -> dict[str, object]:
    resources = {"cpu": "8", "memory": "32Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "annotations": {"kwok.x-k8s.io/node": "fake"},
                         "labels": {"simkube.dev/test": "binding"}},
            "spec": {"taints": [{"key": "kwok.x-k8s.io/node", "value": "fake",
                                 "effect": "NoSchedule"}]},
            "status": {"capacity": resources, "allocatable": resources}}


def bound_pod(name: str, node: str, label: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": {"round": label}},
            "spec": {"nodeName": node, "tolerations": [FAKE_TOLERATION],
                     "terminationGracePeriodSeconds": 0,
                     "containers": [{"name": "c", "image": "registry.example/c:1"}]}}


@dataclass
class Outcome:
    pods: int = 0
    nodes: list[str] = field(default_factory=list)
    stuck: dict[str, list[str]] = field(default_factory=dict)
    slowest_s: float = 0.0  # the slowest round, until every pod ran


async def play_round(core: client.CoreV1Api, namespace: str, label: str, nodes: list[str],
                     outcome: Outcome) -> None:
    outcome.nodes += nodes
    await asyncio.gather(*(core.create_node(fake_node(n)) for n in nodes))
    await asyncio.gather(*(
        core.create_namespaced_pod(namespace, bound_pod(f"{n}-p{p}", n, label))
        for n in nodes for p in range(PODS_PER_NODE)))
    outcome.pods += len(nodes) * PODS_PER_NODE
    started = time.monotonic()
    while True:
        pods = await core.list_namespaced_pod(namespace, label_selector=f"round={label}")
        waiting = sorted(p.metadata.name for p in pods.items if p.status.phase != "Running")
        if not waiting or time.monotonic() - started > START_WITHIN:
            break
        await asyncio.sleep(POLL_S)
    outcome.slowest_s = max(outcome.slowest_s, time.monotonic() - started)
    if waiting:
        outcome.stuck[label] = waiting


async def test_pods_bound_to_brand_new_nodes_all_start(
        kube: client.ApiClient, namespace: str, capsys: pytest.CaptureFixture[str]) -> None:
    core = client.CoreV1Api(kube)
    rng = random.Random(SEED)  # noqa: S311  # reproducible bursts, not secrets
    rounds = [[f"{namespace}-{index}-n{n}" for n in range(rng.randint(*NODES_PER_ROUND))]
              for index in range(ROUNDS)]
    outcome = Outcome()
    began = time.monotonic()
    try:
        for first in range(0, ROUNDS, AT_ONCE):
            await asyncio.gather(*(
                play_round(core, namespace, f"{namespace}-{index}", rounds[index], outcome)
                for index in range(first, min(first + AT_ONCE, ROUNDS))))
    finally:
        await asyncio.gather(*(core.delete_node(n) for n in outcome.nodes),
                             return_exceptions=True)
    with capsys.disabled():
        print(f"\nkwok binding: {outcome.pods} pods on {len(outcome.nodes)} new nodes in "
              f"{ROUNDS} rounds, {time.monotonic() - began:.0f} s, slowest round "
              f"{outcome.slowest_s:.1f} s; never started: {outcome.stuck}")
    assert outcome.pods >= 3000
    assert not outcome.stuck, f"pods never started: {outcome.stuck}"
