"""The HPA benchmark's what-if: the recorded HPA's CPU target 50 % -> 80 %, with a node
autoscaler, so fewer replicas show up as fewer nodes and a lower bill.

The truth's environment has room for every replica on the node groups' minimum nodes (its
replays must measure the HPA, not provisioning), so nothing there can show nodes. The what-if
runs in an environment of its own: the same services and metrics-server, the autoscaler the
fidelity benchmark measures (``SIMKUBE_FIDELITY_AUTOSCALER``: Cluster Autoscaler by default,
or ``karpenter``), and one node group of two-CPU nodes starting at one node, so each pair of
the workload's one-CPU replicas costs a node. The same recorded trace is replayed as it was
(baseline) and with ``skctl trace edit --hpa-cpu-target 80``; ``skctl compare`` shows the two.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks import fidelity_hpa_load as load
from benchmarks import fidelity_settings
from benchmarks.fidelity_autoscaler import prepare
from benchmarks.fidelity_hpa_runs import hpa_summary, replay
from benchmarks.fidelity_replay import ReplayError, env_down, skctl
from simkube.core.errors import EnvironmentStateError

TARGET_PERCENT = 80
_COMPARED = ("peak_desired", "mean_desired", "peak_nodes", "node_hours", "cost_usd")
NODE_GROUPS = """\
# The HPA what-if's nodes: two CPUs each, so two of the workload's one-CPU replicas a node.
namespace: sk-cloudprov
provisioning: {delay: 60s, jitter: 15s, readyAfter: 10s}
nodeGroups:
- id: small
  minSize: 1
  maxSize: 10
  pricePerHour: 0.096
  shape: {cpu: 2, memory: 8Gi, instanceType: m5.large, zone: us-east-1a,
          labels: {simkube.dev/size: small}}
"""


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def nodes_and_cost(run_dir: Path) -> dict[str, Any]:
    """Peak nodes (summed over groups), node hours and cost from the run's summary.json."""
    summary = json.loads((run_dir / "summary.json").read_text())
    groups = summary.get("groups") or {}
    return {"peak_nodes": sum(int(g.get("peak_nodes", 0)) for g in groups.values()),
            "node_hours": summary.get("node_hours"), "cost_usd": summary.get("cost_usd")}


def what_if(work: Path, *, speed: float, duration_s: float) -> Iterator[dict[str, Any]]:
    """Bring up the what-if environment, replay baseline and edited traces, compare, tear down."""
    try:
        autoscaler = prepare(fidelity_settings.autoscaler(os.environ))
    except (EnvironmentStateError, fidelity_settings.SettingsError) as exc:
        yield {"figure": "fidelity_hpa.what_if", "ran": False, "reason": str(exc)}
        return
    edited = work / f"target-{TARGET_PERCENT}.trace"
    skctl("trace", "edit", str(work / "truth.trace"), str(edited),
          "--hpa", f"{load.NAMESPACE}/{load.NAME}", "--hpa-cpu-target", str(TARGET_PERCENT),
          show=True)
    groups = work / "what-if-node-groups.yaml"
    groups.write_text(NODE_GROUPS)
    env = f"bench-hpa-whatif-{os.getpid()}"
    try:
        skctl("env", "up", "--name", env, "--services", "--metrics-server", *autoscaler.up_args,
              "--node-groups", str(groups), show=True)
        label = "x" + f"{speed:g}".replace(".", "-")
        base = replay(env, name=f"hpa-base-{label}", trace=work / "truth.trace", speed=speed,
                      duration_s=duration_s)
        changed = replay(env, name=f"hpa-target{TARGET_PERCENT}-{label}", trace=edited,
                         speed=speed, duration_s=duration_s)
        out = work / "compare"
        _log(skctl("compare", f"{base.parent.name}/{base.name}",
                   f"{changed.parent.name}/{changed.name}", "--env", env, "--output", str(out)))
        before = {**hpa_summary(base, end_s=duration_s), **nodes_and_cost(base)}
        after = {**hpa_summary(changed, end_s=duration_s), **nodes_and_cost(changed)}
        yield {"figure": "fidelity_hpa.what_if", **autoscaler.label, "speed": speed,
               "target_percent": TARGET_PERCENT,
               **{f"baseline_{k}": before[k] for k in _COMPARED},
               **{f"edited_{k}": after[k] for k in _COMPARED},
               "fewer": {k: after[k] < before[k] for k in _COMPARED},
               "compare_output": str(out), "results": [str(base), str(changed)]}
    except ReplayError as exc:
        yield {"figure": "fidelity_hpa.what_if", "ran": False, "reason": str(exc)}
    finally:
        env_down(env)

