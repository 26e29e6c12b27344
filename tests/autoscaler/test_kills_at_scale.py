"""A replay with Cluster Autoscaler at 1,000 nodes survives SIGKILL of sk-cloudprov, CA and
sk-ctrl, one at a time, mid-run.

Five groups of 200 eight-CPU nodes, at their fixed size and cordoned, make CA's loop walk
1,000 nodes without giving the replay anywhere to run; the dsb-scaling sample at speed 10
scales the default ``small`` and ``large`` groups beside them. While it runs, each component
is killed and started again (``skctl env restart --kill``). What must hold afterwards:

- the Simulation finishes and its run succeeds (sk-ctrl follows its run again after its
  restart);
- no node is lost or doubled: every group has exactly as many Nodes as sk-cloudprov's
  placeholder pods (its target size), every one Ready, none named twice;
- no pod was left stuck: every pod bound to a node started, and every pod the scheduler
  could place was placed (none still pending when the replay ended).

sk-driver is not in the list: it keeps a run's progress (trace position, pod-run matching)
in memory, so a killed driver loses the run, which sk-ctrl reports as failed (docs/simulations.md).
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes_asyncio import client

from simkube.env.services.commands import DEFAULT_NODE_GROUPS
from simkube.results import load_run
from tests.autoscaler.conftest import GROUP_LABEL, connect, group
from tests.conftest import skctl
from tests.support.kube import eventually

pytestmark = [pytest.mark.autoscaler, pytest.mark.timeout(1800)]
TRACE = Path(__file__).parents[1] / "data" / "simkube" / "dsb-scaling.sktrace"
FILLERS = 5
FILLER_SIZE = 200
KILLS = (("sk-cloudprov", 40.0), ("cluster-autoscaler", 30.0), ("sk-ctrl", 30.0))
CORDON_CONCURRENCY = 32


async def cordon_fillers(api: client.ApiClient) -> int:
    """Cordon every filler Node once all of them exist (sk-cloudprov creates them as its
    placeholder pods run, after ``env up`` returns)."""
    core = client.CoreV1Api(api)

    async def all_there() -> Any:
        nodes = await core.list_node(label_selector="simkube.dev/filler=true")
        return nodes if len(nodes.items) >= FILLERS * FILLER_SIZE else None
    nodes = await eventually(all_there, timeout=600, interval=2,
                             what=f"{FILLERS * FILLER_SIZE} filler Nodes")
    limit = asyncio.Semaphore(CORDON_CONCURRENCY)

    async def cordon(name: str) -> None:
        async with limit:
            await core.patch_node(name, {"spec": {"unschedulable": True}})
    await asyncio.gather(*(cordon(node.metadata.name) for node in nodes.items))
    return len(nodes.items)


async def group_sizes(api: client.ApiClient) -> tuple[dict[str, int], dict[str, list[str]]]:
    """sk-cloudprov's target per group (its placeholder pods) and the Ready Nodes per group."""
    pods = await client.CoreV1Api(api).list_namespaced_pod(
        "sk-cloudprov", label_selector=GROUP_LABEL)
    targets: dict[str, int] = {}
    for pod in pods.items:
        if pod.metadata.deletion_timestamp is None:
            key = pod.metadata.labels[GROUP_LABEL]
            targets[key] = targets.get(key, 0) + 1
    nodes = await client.CoreV1Api(api).list_node(label_selector=GROUP_LABEL)
    ready: dict[str, list[str]] = {}
    for node in nodes.items:
        conditions = {c.type: c.status for c in node.status.conditions or []}
        if node.metadata.deletion_timestamp is None and conditions.get("Ready") == "True":
            ready.setdefault(node.metadata.labels[GROUP_LABEL], []).append(node.metadata.name)
    return targets, ready


async def test_a_replay_at_1000_nodes_survives_each_component_killed(make_env: Any) -> None:
    groups = yaml.safe_load(DEFAULT_NODE_GROUPS.read_text())["nodeGroups"]
    for entry in groups:  # trace time: sk-cloudprov divides them by the run's speed
        entry["provisioning"] = {"delay": "60s", "readyAfter": "10s"}
    for n in range(FILLERS):
        filler = group(f"filler-{n}", cpu=8, price=0.384, min_size=FILLER_SIZE,
                       max_size=FILLER_SIZE)
        filler["shape"]["labels"] = {"simkube.dev/filler": "true"}
        groups.append(filler)
    env = make_env(groups, "--autoscaler-flag=--max-nodes-total=2000")
    async with await connect(env) as api:
        assert await cordon_fillers(api) == FILLERS * FILLER_SIZE
        env.mark()
        skctl("run", "--env", env.name, "--name", "kills", "--trace", str(TRACE), "--speed",
              "10", "--seed", "3")
        began = time.monotonic()
        for component, after in KILLS:
            await asyncio.sleep(after)
            await asyncio.to_thread(env.restart, component)
            print(f"{component} killed and healthy again at {time.monotonic() - began:.0f} s")

        async def finished() -> dict[str, Any] | None:
            result = skctl("status", "kills", "--env", env.name, "--json", check=False)
            if result.returncode != 0:
                return None
            status: dict[str, Any] = json.loads(result.stdout)["status"]
            return status if status.get("state") in ("Finished", "Failed") else None
        status = await eventually(finished, timeout=900, interval=5,
                                  what="the Simulation to finish")
        assert status["state"] == "Finished", status
        assert [run["state"] for run in status["runs"]] == ["Finished"], status["runs"]

        async def settled() -> tuple[dict[str, int], dict[str, list[str]]] | None:
            targets, ready = await group_sizes(api)
            counts = {key: len(names) for key, names in ready.items()}
            return (targets, ready) if counts == targets else None
        targets, ready = await eventually(settled, timeout=180, interval=2,
                                          what="every group's Nodes to match its target")
        names = [name for group_names in ready.values() for name in group_names]
        assert len(names) == len(set(names))
        assert all(targets[f"filler-{n}"] == FILLER_SIZE for n in range(FILLERS)), targets
    run = load_run(Path(status["resultsDir"]) / "run-1")
    assert run.summary.pods.bound_never_started == 0, run.summary.pods
    assert run.summary.pods.never_scheduled == 0, run.summary.pods
    totals = [row.nodes_total for row in run.timeline]
    assert max(totals) > totals[0], "CA never scaled the default groups up"
