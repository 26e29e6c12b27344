"""A replay with Cluster Autoscaler among 1,000 nodes survives SIGKILL of sk-driver,
sk-cloudprov, CA and sk-ctrl, one at a time, mid-run (issue #26's kill -9 episodes).

``FILLER_GROUPS`` groups at a fixed size (``NODES`` nodes in all, tainted so the replay's pods
cannot use them) make CA's loop, sk-cloudprov's watches and the scheduler work at that scale;
the dsb-scaling sample at speed 10 keeps CA scaling the default ``small`` and ``large``
groups beside them. Each component is killed and started again with ``skctl env restart
--kill`` at a point of the replay's trace time. sk-driver goes first: it keeps a run's
progress in memory, so its run is lost, and sk-ctrl deletes what that run left and replays
it as the next run (docs/simulations.md); the other three are killed during that run, so its
results are the ones judged. What must hold:

- the Simulation finishes (``Finished``): the lost run is listed as such, the run replaying
  it finished;
- no node is lost or doubled: a scaled group never had more Nodes than CA's plans asked for,
  every Node that went away during run 2 was one CA told sk-cloudprov to delete (before it,
  sk-ctrl's reset of the groups to their minimum deletes Nodes too) or after it, while CA
  scales the groups back to their minimum, the filler Nodes are the ones there before the
  run, and when the run ends every group has exactly as many Ready Nodes as sk-cloudprov's
  target;
- no pod was left Pending that the scheduler could place: when the replay ended no pod was
  pending (the trace's load was falling, so every pod had a node) and no pod bound to a node
  failed to start.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes_asyncio import client

from simkube.env.services.commands import DEFAULT_NODE_GROUPS
from simkube.results import load_run
from tests.autoscaler.conftest import (
    FAST_SCALE_DOWN,
    GROUP_LABEL,
    CaEnv,
    Sampler,
    connect,
    group,
)
from tests.conftest import skctl
from tests.support.kube import eventually

NODES = 1000  # the filler Nodes; develop with 100
FILLER_GROUPS = 5
FILLER_TAINT = "simkube.dev/filler=true:NoSchedule"
TRACE = Path(__file__).parents[1] / "data" / "simkube" / "dsb-scaling.sktrace"
SCALED = ("small", "large")
# (component, run, fraction of the trace replayed when it is killed)
KILLS = (("sk-driver", 1, 0.15), ("sk-cloudprov", 2, 0.2), ("cluster-autoscaler", 2, 0.45),
         ("sk-ctrl", 2, 0.7))
TARGET = re.compile(r"\{(\S+) \d+->(\d+)")
pytestmark = [pytest.mark.autoscaler, pytest.mark.timeout(2400)]


def status_of(env: CaEnv) -> dict[str, Any]:
    result = skctl("status", "kills", "--env", env.name, "--json", check=False)
    return dict(json.loads(result.stdout)["status"]) if result.returncode == 0 else {}


def asked(env: CaEnv) -> dict[str, int]:
    """The largest size CA's plans since the mark asked of each group."""
    most: dict[str, int] = {}
    for plan in env.plans():
        for key, size in TARGET.findall(plan):
            most[key] = max(most.get(key, 0), int(size))
    return most


async def targets_and_ready(api: client.ApiClient) -> tuple[dict[str, int], dict[str, int]]:
    """sk-cloudprov's target per group (its live placeholder pods) and its Ready Nodes."""
    core = client.CoreV1Api(api)
    targets: dict[str, int] = {}
    for pod in (await core.list_namespaced_pod("sk-cloudprov",
                                               label_selector=GROUP_LABEL)).items:
        if pod.metadata.deletion_timestamp is None:
            key = pod.metadata.labels[GROUP_LABEL]
            targets[key] = targets.get(key, 0) + 1
    ready: dict[str, int] = {}
    for node in (await core.list_node(label_selector=GROUP_LABEL)).items:
        up = {c.type: c.status for c in node.status.conditions or []}.get("Ready") == "True"
        if up and node.metadata.deletion_timestamp is None:
            key = node.metadata.labels[GROUP_LABEL]
            ready[key] = ready.get(key, 0) + 1
    return targets, ready


async def filler_names(api: client.ApiClient) -> set[str]:
    nodes = await client.CoreV1Api(api).list_node(label_selector="simkube.dev/filler=true")
    return {node.metadata.name for node in nodes.items}


async def when_reached(env: CaEnv, *, run: int, fraction: float, why: str) -> None:
    """Once run ``run`` has replayed ``fraction`` of the trace."""
    async def reached() -> bool:
        status = await asyncio.to_thread(status_of, env)
        at = status.get("traceTimeSeconds") or 0
        length = status.get("traceLengthSeconds") or 0
        return (status.get("currentRun") == run and status.get("state") == "Running"
                and length > 0 and at >= fraction * length)
    await eventually(reached, timeout=900, interval=1,
                     what=f"run {run} at {fraction:.0%} of the trace {why}")


async def kill_when_reached(env: CaEnv, *, component: str, run: int, fraction: float) -> None:
    """Kill ``component`` once run ``run`` has replayed ``fraction`` of the trace."""
    await when_reached(env, run=run, fraction=fraction, why=f"to kill {component}")
    began = time.monotonic()
    await asyncio.to_thread(env.restart, component)
    print(f"{component} killed in run {run} at {fraction:.0%}, healthy again after "
          f"{time.monotonic() - began:.1f} s")


def node_groups() -> list[dict[str, Any]]:
    """The default groups (provisioning as slow as test_simulation's) and the fillers."""
    groups: list[dict[str, Any]] = yaml.safe_load(DEFAULT_NODE_GROUPS.read_text())["nodeGroups"]
    for entry in groups:  # trace time: sk-cloudprov divides them by the run's speed
        entry["provisioning"] = {"delay": "60s", "readyAfter": "10s"}
    for n in range(FILLER_GROUPS):
        filler = group(f"filler-{n}", cpu=8, price=0.384, min_size=NODES // FILLER_GROUPS,
                       max_size=NODES // FILLER_GROUPS)
        filler["shape"]["labels"] = {"simkube.dev/filler": "true"}
        filler["shape"]["taints"] = [FILLER_TAINT]
        groups.append(filler)
    return groups


async def replay_with_kills(env: CaEnv, sampler: Sampler) -> dict[str, Any]:
    """Start the Simulation, kill each component in turn, wait until it ends; its status."""
    skctl("run", "--env", env.name, "--name", "kills", "--trace", str(TRACE), "--speed", "10",
          "--seed", "3")
    for component, run, fraction in KILLS:
        if run == 2 and fraction == min(f for _, r, f in KILLS if r == 2):
            # Before run 2, sk-ctrl put the groups back at their minimum (the footing of
            # every run, docs/simulations.md), deleting Nodes CA did not choose; what went
            # from here on must be CA's choice.
            await when_reached(env, run=2, fraction=0, why="to sample it alone")
            await sampler.stop()
            sampler.start()
        await kill_when_reached(env, component=component, run=run, fraction=fraction)

    async def finished() -> dict[str, Any]:
        status = await asyncio.to_thread(status_of, env)
        return status if status.get("state") in ("Finished", "Failed") else {}
    return await eventually(finished, timeout=900, interval=5, what="the Simulation to end")


async def test_a_replay_among_1000_nodes_survives_each_component_killed(
        make_env: Any) -> None:
    groups = node_groups()
    minimum = {entry["id"]: entry["minSize"] for entry in groups}
    began = time.monotonic()
    env = make_env(groups, f"--autoscaler-flag=--max-nodes-total={2 * NODES}",
                   *FAST_SCALE_DOWN)
    async with await connect(env) as api:
        async def all_fillers() -> set[str]:
            names = await filler_names(api)
            return names if len(names) == NODES else set()
        fillers = await eventually(all_fillers, timeout=900, interval=2,
                                   what=f"{NODES} filler Nodes")
        print(f"{NODES} filler Nodes after {time.monotonic() - began:.0f} s")
        sampler = Sampler(api, selector=f"{GROUP_LABEL} in ({','.join(SCALED)})")
        env.mark()
        sampler.start()
        status = await replay_with_kills(env, sampler)
        print(f"Simulation {status['state']} after {time.monotonic() - began:.0f} s")
        assert status["state"] == "Finished", status
        assert [run["state"] for run in status["runs"]] == ["Failed", "Finished"], status
        assert "lost" in status["runs"][0]["message"], status["runs"][0]

        async def settled() -> tuple[dict[str, int], dict[str, int]] | None:
            targets, ready = await targets_and_ready(api)
            return (targets, ready) if targets == ready else None
        targets, _ = await eventually(settled, timeout=300, interval=2,
                                      what="every group's Ready Nodes to match its target")

        async def at_minimum() -> bool:
            return {key: sampler.now.get(key, 0) for key in SCALED} == {
                key: minimum[key] for key in SCALED}
        await eventually(at_minimum, timeout=600, interval=2,
                         what=f"CA to scale {SCALED} back to their minimum")
        await sampler.stop()
        wanted = asked(env)
        assert any(wanted.get(key, 0) > 0 for key in SCALED), "CA never scaled up"
        for key in SCALED:
            assert sampler.peak.get(key, 0) <= max(wanted.get(key, 0), minimum[key]), (
                key, sampler.peak, wanted)
        now = {node.metadata.name for node in (await client.CoreV1Api(api).list_node(
            label_selector=GROUP_LABEL)).items}
        gone = sampler.seen - now
        assert gone, "CA deleted no Node after the run"
        assert gone <= set(env.deletions()), "a Node CA did not delete went"
        assert await filler_names(api) == fillers
        assert all(targets[f"filler-{n}"] == NODES // FILLER_GROUPS
                   for n in range(FILLER_GROUPS)), targets
    run = load_run(Path(status["runs"][1]["resultsDir"]))
    assert run.timeline[-1].pods_pending == 0, run.timeline[-1]
    assert run.summary.pods.bound_never_started == 0, run.summary.pods
    print(f"judged run: {run.summary.pods}; CA asked {wanted}; peaks {sampler.peak}; "
          f"{len(env.deletions())} Nodes deleted by CA; wall {time.monotonic() - began:.0f} s")
