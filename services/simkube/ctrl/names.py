"""The names sk-ctrl reads and writes in the cluster: the Simulation API, its finalizer, the Lease.

They are a contract with skctl (which creates Simulations), the CRD in deploy/crds/ and the
driver (whose run names must stay DNS labels), so they live in one place.
"""

from __future__ import annotations

from simkube.core.kubeapi import SIMULATIONS

GROUP = "simkube.dev"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
KIND = "Simulation"
PLURAL = "simulations"
CRD_NAME = f"{PLURAL}.{GROUP}"
SIMULATIONS_PATH = SIMULATIONS.path()
FINALIZER = f"{GROUP}/simulation-cleanup"
FIELD_MANAGER = "sk-ctrl"
COMPONENT = "sk-ctrl"

LEASE_NAME = "sk-ctrl-simulation"
DEFAULT_LEASE_NAMESPACE = "simkube-system"
EVENTS_NAMESPACE = "default"  # a cluster-scoped object's Events live in "default"

MAX_LABEL = 63


def simulation_path(name: str) -> str:
    return f"{SIMULATIONS_PATH}/{name}"


def run_name(simulation: str, run: int) -> str:
    """The driver's name for run ``run``: ``<simulation>-r<run>``, cut to stay a DNS label."""
    suffix = f"-r{run}"
    stem = simulation[:MAX_LABEL - len(suffix)].rstrip("-")
    return f"{stem}{suffix}"
