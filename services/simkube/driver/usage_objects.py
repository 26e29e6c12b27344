"""The usage a replayed workload's pods report, as KWOK ``ClusterResourceUsage`` objects.

Model (docs/hpa.md): the trace holds each workload's *total* usage over time, L(t) (the
sum over its pods, step-held between samples). Every currently running replayed pod of the
workload uses L(t) / running pods, so when an HPA adds pods the per-pod usage falls, which
is how a real scale-out relieves its pods and what lets the HPA converge. KWOK applies a
usage value to each container it selects, so a pod's share is split evenly over its
containers (the HPA's utilization is per pod: the sum over containers against their sum of
requests). Values are floored at 1 millicore and 1 byte: metrics-server drops a container
whose CPU counter or memory is zero, and a pod without metrics is one the HPA guesses about.

One object per workload, naming its current pods, is the write pattern with the fewest API
writes: a new sample is one write for the whole workload however many pods it runs (one
``ResourceUsage`` per pod would be one write per pod per sample), and a replica change is
one more. The object selects pods by name (KWOK's selector knows names and namespaces only).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from simkube.core.kubeapi import CLUSTER_RESOURCE_USAGES
from simkube.driver.names import SIMULATION_LABEL, USAGE_WORKLOAD
from simkube.trace import UsageSample, WorkloadUsage

MIN_CPU_MILLICORES = 1
MIN_MEMORY_BYTES = 1


def workload_key(usage: WorkloadUsage) -> str:
    """How pod templates name their workload (``USAGE_WORKLOAD``), as lifecycles do."""
    return f"{usage.kind} {usage.workload}"


@dataclass(frozen=True, slots=True, kw_only=True)
class PodShare:
    """What each container of each running pod uses at one moment."""

    cpu_millicores: int
    memory_bytes: int


def share(sample: UsageSample, *, running: int, containers: int) -> PodShare:
    """L(t) / running pods, split over ``containers``; ``running`` and ``containers`` >= 1."""
    if running < 1 or containers < 1:
        raise ValueError(f"no pods to share usage over (running={running}, "
                         f"containers={containers})")
    parts = running * containers
    return PodShare(cpu_millicores=max(MIN_CPU_MILLICORES, round(sample.cpu_millicores / parts)),
                    memory_bytes=max(MIN_MEMORY_BYTES, round(sample.memory_bytes / parts)))


def object_name(*, simulation: str, key: str) -> str:
    """A stable, valid name per simulation and workload (workload names can be long)."""
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    return f"{simulation[:200]}-usage-{digest}"


def usage_object(*, name: str, simulation: str, key: str, namespace: str, pods: list[str],
                 pod_share: PodShare, owner: dict[str, Any]) -> dict[str, Any]:
    """The ClusterResourceUsage for one workload's ``pods`` in ``namespace``."""
    return {
        "apiVersion": CLUSTER_RESOURCE_USAGES.api_version,
        "kind": CLUSTER_RESOURCE_USAGES.kind,
        "metadata": {"name": name, "labels": {SIMULATION_LABEL: simulation},
                     "annotations": {USAGE_WORKLOAD: key},
                     "ownerReferences": [owner]},
        "spec": {"selector": {"matchNamespaces": [namespace], "matchNames": sorted(pods)},
                 "usages": [{"usage": {
                     "cpu": {"value": f"{pod_share.cpu_millicores}m"},
                     "memory": {"value": str(pod_share.memory_bytes)}}}]},
    }
