"""The SimulationRoot: its CRD, creating one, reporting status on it, deleting it for good.

Cleanup relies on Kubernetes garbage collection: everything a simulation creates has an
owner reference (with blockOwnerDeletion) to its root, so a foreground delete of the root
removes dependents first and the root last. "The root is gone" therefore means "everything
is gone", which is what ``delete_root`` waits for.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import yaml

from simkube.core.errors import UnavailableError
from simkube.core.kubeapi import (
    CUSTOM_RESOURCE_DEFINITIONS,
    MERGE_PATCH,
    SIMULATION_ROOTS,
    ApiError,
    KubeClient,
    poll,
)
from simkube.core.logs import get_logger
from simkube.driver.errors import SimulationConflictError
from simkube.driver.names import ROOT_API_VERSION, ROOT_CRD_NAME, ROOT_KIND
from simkube.driver.progress import ProgressSnapshot
from simkube.driver.rewriting import RootRef

log = get_logger(__name__)
CRD_FILE = Path(__file__).resolve().parent / "simulationroot-crd.yaml"
CRD_TIMEOUT = 60.0
GC_TIMEOUT = 600.0
STATUS_FAILURES = 20  # recent failures copied to the root's status


def crd_manifest() -> dict[str, Any]:
    manifest: dict[str, Any] = yaml.safe_load(CRD_FILE.read_text())
    return manifest


def _established(crd: dict[str, Any]) -> bool:
    conditions = crd.get("status", {}).get("conditions") or []
    return any(c.get("type") == "Established" and c.get("status") == "True"
               for c in conditions)


async def ensure_crd(kube: KubeClient, *, timeout: float = CRD_TIMEOUT) -> bool:
    """Install the SimulationRoot CRD if missing and wait until it is Established.

    Returns True when this call installed it."""
    path = CUSTOM_RESOURCE_DEFINITIONS.path(name=ROOT_CRD_NAME)
    installed = False
    try:
        crd = await kube.request("GET", path)
    except ApiError as exc:
        if exc.code != 404:
            raise
        try:
            crd = await kube.request("POST", CUSTOM_RESOURCE_DEFINITIONS.path(),
                                     body=crd_manifest())
            installed = True
            log.info("installed CRD", crd=ROOT_CRD_NAME)
        except ApiError as create_error:
            if create_error.code != 409:  # someone else installed it meanwhile
                raise
            crd = await kube.request("GET", path)
    if _established(crd):
        return installed

    async def established() -> bool:
        return _established(await kube.request("GET", path))
    if not await poll(established, timeout=timeout, interval=0.1):
        raise UnavailableError(f"the {ROOT_CRD_NAME} CRD was not Established within "
                               f"{timeout:.0f}s")
    return installed


async def root_exists(kube: KubeClient, name: str) -> bool:
    return await kube.exists(SIMULATION_ROOTS.path(name=name))


async def create_root(kube: KubeClient, *, name: str, spec: dict[str, Any]) -> RootRef:
    body = {"apiVersion": ROOT_API_VERSION, "kind": ROOT_KIND,
            "metadata": {"name": name, "labels": {"app.kubernetes.io/part-of": "simkube"}},
            "spec": spec}
    try:
        created = await kube.request("POST", SIMULATION_ROOTS.path(), body=body)
    except ApiError as exc:
        if exc.code == 409:
            raise SimulationConflictError(
                f"simulation root {name} already exists in the cluster",
                hint=f"cancel that simulation, delete it (kubectl delete simulationroot {name}) "
                     "or choose another name") from None
        raise
    return RootRef(name=name, uid=created["metadata"]["uid"])


def status_body(snapshot: ProgressSnapshot) -> dict[str, Any]:
    failures = [{
        "traceOffsetMs": f.trace_offset_ms, "operation": f.operation.value, "object": f.object,
        "code": f.code, "reason": f.reason, "message": f.message[:500], "attempts": f.attempts,
    } for f in snapshot.failures[-STATUS_FAILURES:]]
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"status": {
        "state": snapshot.state.value,
        "events": f"{snapshot.events_applied}/{snapshot.events_total}",
        "eventsApplied": snapshot.events_applied, "eventsTotal": snapshot.events_total,
        "objectsApplied": snapshot.objects_applied, "objectsFailed": snapshot.objects_failed,
        "traceTimeMs": snapshot.trace_time_ms, "lagP50Ms": round(snapshot.lag_p50_ms, 3),
        "lagP99Ms": round(snapshot.lag_p99_ms, 3), "podsTimed": snapshot.pods_timed,
        "message": snapshot.message, "updatedAt": now, "failures": failures}}


async def report_status(kube: KubeClient, root: RootRef, snapshot: ProgressSnapshot) -> None:
    """Best effort: a status the API server refuses must never stop a replay."""
    try:
        await kube.request("PATCH", SIMULATION_ROOTS.path(name=root.name, subresource="status"),
                           body=status_body(snapshot), content_type=MERGE_PATCH)
    except ApiError as exc:
        log.warning("status update failed", root=root.name, error=str(exc))


async def delete_root(kube: KubeClient, name: str, *, timeout: float = GC_TIMEOUT) -> None:
    """Delete the root in the foreground and wait until it, and so everything, is gone."""
    try:
        await kube.request("DELETE", SIMULATION_ROOTS.path(name=name),
                           body={"kind": "DeleteOptions", "apiVersion": "v1",
                                 "propagationPolicy": "Foreground"})
    except ApiError as exc:
        if exc.code != 404:
            raise

    async def gone() -> bool:
        return not await root_exists(kube, name)
    if not await poll(gone, timeout=timeout, interval=0.25):
        raise UnavailableError(f"simulation root {name} was not garbage collected within "
                               f"{timeout:.0f}s; the cluster's garbage collector may be slow or "
                               "a dependent has a finalizer nothing removes")
