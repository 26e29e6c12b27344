"""Cluster Autoscaler's loop broken down: per loop, each RPC's calls and each function's time.

CA's main loop at 1,000 nodes is the speed limit of a faithful replay (issue #26). Its time
splits into CA's own work and the serial externalgrpc calls it makes to sk-cloudprov, so this
measures both sides over the same window, with CA idle over N steady nodes (no workload: every
node is a scale-down candidate that its group's minimum keeps), and the same with CA's
in-process ``kwok`` cloud provider on N equal nodes as the anchor. Figures, one line per size
and provider:

* ``autoscaler_loop.functions``: loops in the window, ``main`` p50/p90 (bucket bounds) and the
  mean seconds per loop of each function of ``cluster_autoscaler_function_duration_seconds``.
* ``autoscaler_loop.rpcs`` (sk-cloudprov only): calls per loop of each RPC that reached
  sk-cloudprov and its own mean handling time, from its ``grpc_server_*`` metrics.
* ``autoscaler_loop.front`` (through sk-cloudprov-front): calls per loop the front answered
  from its cache and forwarded, per RPC.

Three providers per size, one after the other in the same session, each in its own
environment: sk-cloudprov directly (``--no-cloudprov-front``), sk-cloudprov through its front
(``env up --autoscaler``'s default), and the anchor. The sk-cloudprov side is ``skctl env up
--autoscaler`` with five groups of N/5 (minimum N/5); the anchor is ``skctl env up --nodes
N`` with nodes the kwok provider owns (providerID ``kwok://``, its group annotations, one
group, minimum N) and CA started here with ``--cloud-provider=kwok`` and the environment's
flags. Needs a CA binary with the ``kwok`` tag (the project's is built with
``externalgrpc,kwok``); prints one line saying why not otherwise. ``SIMKUBE_BENCH_LOOP_SIZES``
(e.g. ``1000,5000``) replaces the sizes, 100 and 1,000 nodes. The window's arithmetic is in
``benchmarks/loop_metrics.py``, the anchor in ``benchmarks/kwok_anchor.py``.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from benchmarks.ca_binary import missing_ca
from benchmarks.kwok_anchor import SKCTL, kwok_provider, skctl
from benchmarks.loop_metrics import front as cached
from benchmarks.loop_metrics import functions, rpcs, window
from simkube.env import state
from simkube.env.paths import env_dir
from simkube.env.services.cloudprov_front import NAME as FRONT

SIZES = (100, 1_000)
GROUPS = 5


def _metrics_address(recorded: state.EnvState, component: str) -> str:
    return next(arg.split("=", 1)[1] for c in recorded.components for arg in c.argv
                if c.name == component and arg.startswith("--metrics-listen="))


def _cloudprov(nodes: int, work: Path, *, front: bool) -> Iterator[dict[str, Any]]:
    name = f"bench-loop-{os.getpid()}"
    per_group = nodes // GROUPS
    groups = work / "groups.yaml"
    groups.write_text(yaml.safe_dump({"nodeGroups": [
        {"id": f"pool-{n}", "minSize": per_group, "maxSize": per_group * 2,
         "pricePerHour": 0.384, "shape": {"cpu": 8, "memory": "32Gi",
                                          "instanceType": "m5.2xlarge", "zone": "sim-a"}}
        for n in range(GROUPS)]}))
    try:
        skctl("env", "up", "--name", name, "--autoscaler", "--node-groups", str(groups),
              f"--autoscaler-flag=--max-nodes-total={nodes * 2}",
              "--cloudprov-front" if front else "--no-cloudprov-front")
        recorded = state.load(env_dir(name))
        assert recorded is not None  # noqa: S101  # env up just wrote it
        urls = tuple(f"http://{_metrics_address(recorded, c)}/metrics"
                     for c in ("sk-cloudprov", *([FRONT] if front else [])))
        ca_url = f"http://{recorded.addresses['autoscaler']}/metrics"
        ca_before, ca_after, before, after = window(ca_url, urls)
        figure = functions(ca_before, ca_after, nodes=nodes,
                           provider="sk-cloudprov+front" if front else "sk-cloudprov")
        yield figure
        loops = figure["loops"] or 1
        yield {**rpcs(before[0], after[0], loops=loops, nodes=nodes), "front": front}
        if front:
            yield cached(before[1], after[1], loops=loops, nodes=nodes)
    finally:
        subprocess.run([SKCTL, "env", "down", "--name", name], check=False,
                       capture_output=True, timeout=300)


def run() -> Iterator[dict[str, Any]]:
    if (missing := missing_ca("autoscaler_loop")) is not None:
        yield missing
        return
    ca_path = Path(os.environ["SIMKUBE_CLUSTER_AUTOSCALER"])
    sizes = tuple(int(s) for s in os.environ.get("SIMKUBE_BENCH_LOOP_SIZES", "").split(",")
                  if s) or SIZES
    for nodes in sizes:
        with tempfile.TemporaryDirectory(prefix="bench-loop-") as work:
            yield from _cloudprov(nodes, Path(work), front=False)
            yield from _cloudprov(nodes, Path(work), front=True)
            yield from kwok_provider(nodes, Path(work), ca_path)
