"""The Simulation resource's names in the cluster: its API, finalizer and run names.

They are a contract between skctl (which creates Simulations), sk-ctrl (which runs them),
the CRD in deploy/crds/ and sk-driver (whose run names must stay DNS labels), so they live
in one place that every one of them may import. sk-ctrl's own identity (its field manager,
its Lease) stays in ``ctrl.names``.
"""

from __future__ import annotations

import re

GROUP = "simkube.dev"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
KIND = "Simulation"
PLURAL = "simulations"
CRD_NAME = f"{PLURAL}.{GROUP}"
SIMULATIONS_PATH = f"/apis/{GROUP}/{VERSION}/{PLURAL}"
CRDS_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
FINALIZER = f"{GROUP}/simulation-cleanup"

# Simulation names, namespace prefixes and run names end up in DNS labels: the driver's
# SimulationRoot, the virtual namespaces "<prefix>-<namespace>", and pod labels.
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
MAX_LABEL = 63


def simulation_path(name: str) -> str:
    return f"{SIMULATIONS_PATH}/{name}"


def run_name(simulation: str, run: int) -> str:
    """The driver's name for run ``run``: ``<simulation>-r<run>``, cut to stay a DNS label."""
    suffix = f"-r{run}"
    stem = simulation[:MAX_LABEL - len(suffix)].rstrip("-")
    return f"{stem}{suffix}"
