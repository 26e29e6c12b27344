"""Virtual namespaces: refused up front if taken, created on first use, owned by the root.

A namespace that already exists belongs to someone else (a user, another simulation), and
replaying into it would mix the simulation with it and delete it at cleanup; the driver checks
every namespace the trace needs before it creates anything. ``ensure`` also creates the new
namespace's ``default`` ServiceAccount rather than leave it to the controller-manager: until
it exists, admission refuses every pod in the namespace with a Forbidden, and whoever made
the pod (the applier, a ReplicaSet controller) retries after a wall-clock backoff of tenths
of a second — seconds of trace time at speed 10, different in every run, so two repetitions
of one seed got different pod arrivals. One more request, no waiting; an AlreadyExists (the
controller was first) is fine.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from simkube.core.kubeapi import NAMESPACES, SERVICE_ACCOUNTS, ApiError, KubeClient
from simkube.driver.errors import SimulationConflictError
from simkube.driver.names import SIMULATION_LABEL
from simkube.driver.rewriting import RootRef

CHECK_CONCURRENCY = 16
DEFAULT_ACCOUNT = "default"  # what admission gives every pod that names none


async def check_free(kube: KubeClient, names: Iterable[str]) -> None:
    """Raise ``SimulationConflictError`` naming the first namespace that already exists."""
    limit = asyncio.Semaphore(CHECK_CONCURRENCY)

    async def exists(name: str) -> bool:
        async with limit:
            return await kube.exists(NAMESPACES.path(name=name))
    wanted = sorted(set(names))
    taken = [name for name, found in zip(wanted, await asyncio.gather(
        *(exists(name) for name in wanted)), strict=True) if found]
    if taken:
        raise SimulationConflictError(
            f"virtual namespace {taken[0]} already exists"
            + (f" (and {len(taken) - 1} more)" if len(taken) > 1 else ""),
            hint="choose another prefix, or cancel the simulation that created it")


class Namespaces:
    def __init__(self, kube: KubeClient, *, root: RootRef, simulation: str) -> None:
        self._kube = kube
        self._root = root
        self._simulation = simulation
        self._ready: dict[str, asyncio.Task[None]] = {}

    async def ensure(self, name: str) -> None:
        """Create ``name`` once (concurrent callers share the work); raises ``ApiError``."""
        task = self._ready.get(name)
        if task is None or (task.done() and (task.cancelled() or task.exception() is not None)):
            task = asyncio.ensure_future(self._create(name))
            self._ready[name] = task
        await asyncio.shield(task)

    def forget(self, name: str) -> None:
        """The trace deleted this namespace; a later use creates it again."""
        self._ready.pop(name, None)

    async def _create(self, name: str) -> None:
        body = {"apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": name, "labels": {SIMULATION_LABEL: self._simulation},
                             "ownerReferences": [self._root.owner_reference()]}}
        try:
            await self._kube.request("POST", NAMESPACES.path(), body=body)
        except ApiError as exc:
            if exc.code != 409:
                raise
            await self._check_owned(name)
        account = {"apiVersion": "v1", "kind": "ServiceAccount",
                   "metadata": {"name": DEFAULT_ACCOUNT, "namespace": name}}
        try:
            await self._kube.request("POST", SERVICE_ACCOUNTS.path(namespace=name), body=account)
        except ApiError as exc:
            if exc.code != 409:
                raise

    async def _check_owned(self, name: str) -> None:
        existing = await self._kube.request("GET", NAMESPACES.path(name=name))
        owners = existing.get("metadata", {}).get("ownerReferences") or []
        if not any(owner.get("uid") == self._root.uid for owner in owners):
            raise ApiError(code=409, reason="AlreadyExists", retry=False,
                           message=f"namespace {name} exists and does not belong to this "
                                   "simulation")
