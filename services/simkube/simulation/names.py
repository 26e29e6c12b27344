"""The Simulation resource's names in the cluster: its API, finalizer and run names.

They are a contract between skctl (which creates Simulations), sk-ctrl (which runs them),
the CRD in deploy/crds/ and sk-driver (whose run names must stay DNS labels), so they live
in one place that every one of them may import. sk-ctrl's own identity (its field manager,
its Lease) stays in ``ctrl.names``.
"""

from __future__ import annotations

import re

from simkube.core.kubeapi import CUSTOM_RESOURCE_DEFINITIONS, SIMULATIONS

# The resource itself is an entry of core.kubeapi's resource table; these are its parts.
GROUP = SIMULATIONS.group
VERSION = SIMULATIONS.version
API_VERSION = SIMULATIONS.api_version
KIND = SIMULATIONS.kind
PLURAL = SIMULATIONS.plural
CRD_NAME = SIMULATIONS.crd_name
SIMULATIONS_PATH = SIMULATIONS.path()
CRDS_PATH = CUSTOM_RESOURCE_DEFINITIONS.path()
FINALIZER = f"{GROUP}/simulation-cleanup"

# Simulation names, namespace prefixes and run names end up in DNS labels: the driver's
# SimulationRoot, the virtual namespaces "<prefix>-<namespace>", and pod labels.
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
MAX_LABEL = 63


def simulation_path(name: str) -> str:
    return SIMULATIONS.path(name=name)


def run_name(simulation: str, run: int) -> str:
    """The driver's name for run ``run``: ``<simulation>-r<run>``, cut to stay a DNS label."""
    suffix = f"-r{run}"
    stem = simulation[:MAX_LABEL - len(suffix)].rstrip("-")
    return f"{stem}{suffix}"
