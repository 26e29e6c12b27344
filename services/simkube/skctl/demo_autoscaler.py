"""Which autoscaler the demo's simulated cluster runs, and the flags that tell its story.

Every machine that ran ``make demo`` has Karpenter: ``skctl env build`` builds it from the Go
module proxy with the rest. Cluster Autoscaler cannot be built here (the proxy refuses its
module, docs/cloudprov.md), so the demo runs it only when the user gives a binary
(``--autoscaler-binary`` or ``$SIMKUBE_CLUSTER_AUTOSCALER``, as ``skctl env up`` reads it).

The demo's day is 10 minutes of trace time (``demo_workload``). Karpenter's timers
fit it: it launches within seconds of a pending pod and consolidates a node half a minute
after it turns empty or underutilised. Its default ``consolidateAfter`` (0s) is not used:
with it, Karpenter consolidated nodes while the peak was still filling them (seven
disruptions during the rise in one trial; their pods went back to pending), so the demo's
NodePools wait 30 s of trace time (``env up --consolidate-after 30s``), a common production
setting. Cluster Autoscaler's timers do not fit: it waits 10 minutes after a scale-up before
any scale-down (``scale-down-delay-after-add``) and 10 more before removing an unneeded node
(``scale-down-unneeded-time``), so its run shortens both to one minute of trace time and
says so; nodes then go sooner than production's would, which is the point of showing it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from simkube.env.autoscalers.cluster_autoscaler import BINARY_ENV
from simkube.env.autoscalers.kinds import AutoscalerKind
from simkube.env.toolchain.catalog import (
    CLOUDPROV_FRONT,
    CONTROL_PLANE,
    KARPENTER,
    METRICS_SERVER,
)

# What both clusters run whichever the autoscaler: the control plane and metrics-server (the
# shop's HPA reads it in production, the replay's HPA reads the played-back usage from it).
_CONTROL_PLANE = (*(group.name for group in CONTROL_PLANE), METRICS_SERVER.name)

KARPENTER_CONSOLIDATE_AFTER = "30s"
CA_DEMO_TIMERS = ("clusterAutoscaler.scale-down-delay-after-add=1m",
                  "clusterAutoscaler.scale-down-unneeded-time=1m")


@dataclass(frozen=True, kw_only=True)
class DemoAutoscaler:
    kind: AutoscalerKind
    builds: tuple[str, ...]     # the binary groups the demo runs ('skctl env build --only')
    up_args: tuple[str, ...]    # for 'skctl env up'
    run_args: tuple[str, ...]   # for 'skctl run'
    note: str                   # one line the demo prints before the replay


def choose(*, binary: Path | None) -> DemoAutoscaler:
    """Cluster Autoscaler when a binary is given (the flag, else ``$SIMKUBE_CLUSTER_AUTOSCALER``),
    else Karpenter."""
    named = binary or (Path(os.environ[BINARY_ENV]) if os.environ.get(BINARY_ENV, "").strip()
                       else None)
    if named is None:
        return DemoAutoscaler(
            kind=AutoscalerKind.KARPENTER, builds=(*_CONTROL_PLANE, KARPENTER.name),
            up_args=("--autoscaler", AutoscalerKind.KARPENTER.value,
                     "--consolidate-after", KARPENTER_CONSOLIDATE_AFTER), run_args=(),
            note=("Karpenter launches nodes for pending pods and consolidates them when they "
                  f"empty (set {BINARY_ENV}=PATH to run Cluster Autoscaler instead)"))
    return DemoAutoscaler(
        kind=AutoscalerKind.CLUSTER_AUTOSCALER, builds=(*_CONTROL_PLANE, CLOUDPROV_FRONT.name),
        up_args=("--autoscaler", AutoscalerKind.CLUSTER_AUTOSCALER.value,
                 "--autoscaler-binary", str(named)),
        run_args=tuple(arg for timer in CA_DEMO_TIMERS for arg in ("--timer", timer)),
        note=("Cluster Autoscaler grows the node groups for pending pods; its scale-down "
              "waits are 1m instead of production's 10m so the story fits the day"))
