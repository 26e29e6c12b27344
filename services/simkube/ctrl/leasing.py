"""The one simulation slot, held in a coordination.k8s.io/v1 Lease.

The simulated cluster is shared: two replays at once would mix their pods, nodes and
measurements. The Lease's ``holderIdentity`` names the Simulation that owns the slot, so a
restarted sk-ctrl (or a person with kubectl) sees who holds it; it is renewed while the
simulation runs and cleared when it ends. Writes use the Lease's resourceVersion, so a
concurrent writer makes the write fail (409) instead of being overwritten.
"""

from __future__ import annotations

import asyncio
import datetime
from typing import Any

from simkube.core.kubeapi import LEASES, NAMESPACES, ApiError, KubeClient
from simkube.core.logs import get_logger
from simkube.ctrl.names import COMPONENT, LEASE_NAME

log = get_logger(__name__)
LEASE_DURATION_S = 60
RENEW_INTERVAL_S = 10.0


def micro_time() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class SimulationLease:
    def __init__(self, *, kube: KubeClient, namespace: str) -> None:
        self._kube = kube
        self.namespace = namespace
        self._path = LEASES.path(namespace=namespace)

    async def ensure(self) -> None:
        """Create the namespace and the (unheld) Lease when missing."""
        try:
            await self._kube.request("POST", NAMESPACES.path(), body={
                "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.namespace}})
        except ApiError as exc:
            if exc.code != 409:
                raise
        try:
            await self._kube.request("POST", self._path, body={
                "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": LEASE_NAME, "labels": {
                    "app.kubernetes.io/managed-by": COMPONENT}},
                "spec": {"leaseDurationSeconds": LEASE_DURATION_S}})
        except ApiError as exc:
            if exc.code != 409:
                raise

    async def _get(self) -> dict[str, Any]:
        try:
            return await self._kube.request("GET", f"{self._path}/{LEASE_NAME}")
        except ApiError as exc:
            if exc.code != 404:
                raise
        await self.ensure()
        return await self._kube.request("GET", f"{self._path}/{LEASE_NAME}")

    async def holder(self) -> str | None:
        lease = await self._get()
        return lease.get("spec", {}).get("holderIdentity") or None

    async def _update(self, lease: dict[str, Any], spec: dict[str, Any]) -> None:
        lease["spec"] = spec  # the lease's resourceVersion rides along: 409 if it moved
        await self._kube.request("PUT", f"{self._path}/{LEASE_NAME}", body=lease)

    async def acquire(self, name: str) -> None:
        """Give the slot to ``name``; the caller decided the current holder may lose it."""
        lease = await self._get()
        spec = dict(lease.get("spec") or {})
        stamp = micro_time()
        if spec.get("holderIdentity") != name:
            spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
            spec["acquireTime"] = stamp
        spec.update(holderIdentity=name, renewTime=stamp, leaseDurationSeconds=LEASE_DURATION_S)
        await self._update(lease, spec)
        log.info("lease acquired", simulation=name)

    async def renew(self, name: str) -> bool:
        """Refresh ``renewTime``; False when ``name`` no longer holds the slot."""
        lease = await self._get()
        spec = dict(lease.get("spec") or {})
        if spec.get("holderIdentity") != name:
            return False
        spec["renewTime"] = micro_time()
        await self._update(lease, spec)
        return True

    async def release(self, name: str) -> None:
        """Free the slot if ``name`` holds it."""
        lease = await self._get()
        spec = dict(lease.get("spec") or {})
        if spec.get("holderIdentity") != name:
            return
        for key in ("holderIdentity", "acquireTime", "renewTime"):
            spec.pop(key, None)
        await self._update(lease, spec)
        log.info("lease released", simulation=name)


async def keep_renewed(lease: SimulationLease, name: str, *,
                       interval: float = RENEW_INTERVAL_S) -> None:
    """Renew ``name``'s hold every ``interval`` seconds until cancelled; a renewal the API
    refuses is logged and tried again next time (the Lease outlives a few misses)."""
    while True:
        await asyncio.sleep(interval)
        try:
            await lease.renew(name)
        except ApiError as exc:
            log.warning("lease not renewed", simulation=name, error=str(exc))
