"""sk-ctrl's own names in the cluster: its field manager, event source and Lease.

The Simulation resource's names (API, finalizer, run names) are a contract with skctl and
the CRD and live in ``simulation.names``; these belong to the controller alone.
"""

from __future__ import annotations

FIELD_MANAGER = "sk-ctrl"
COMPONENT = "sk-ctrl"

LEASE_NAME = "sk-ctrl-simulation"
DEFAULT_LEASE_NAMESPACE = "simkube-system"
EVENTS_NAMESPACE = "default"  # a cluster-scoped object's Events live in "default"
