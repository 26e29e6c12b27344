"""After kube-controller-manager restarts: wait until its controllers act, not only answer.

The controller-manager's ``/healthz`` passes before its controllers run: they are built,
their informers started and synced afterwards. sk-ctrl restarts it when a Simulation's timers
change its flags, just before the replay starts, so the trace's first Deployments waited up
to a second of wall time for a ReplicaSet controller — ten seconds of trace time at speed 10, and
only in the first run of a Simulation (later repetitions at the same speed do not restart
it): the pods of one seed arrived differently from one repetition to the next. The one sure
sign that the controllers act is that they act, so a probe Deployment with no replicas is
created in ``kube-system`` and waited for until the deployment controller has observed it
and the ReplicaSet controller has observed the ReplicaSet it made; then it is deleted.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from simkube.core.errors import EnvironmentStateError
from simkube.core.kubeapi import DEPLOYMENTS, REPLICA_SETS, ApiError, KubeClient, delete

PROBE = "simkube-controllers-probe"
NAMESPACE = "kube-system"
POLL_S = 0.05
TIMEOUT_S = 60.0


def probe_deployment() -> dict[str, Any]:
    labels = {"app": PROBE}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": PROBE, "namespace": NAMESPACE, "labels": labels},
            "spec": {"replicas": 0, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": {
                         "containers": [{"name": "probe", "image": "simkube.invalid/probe"}]}}}}


def observed(obj: dict[str, Any]) -> bool:
    """Whether the object's controller has seen its current generation."""
    generation = (obj.get("metadata") or {}).get("generation") or 0
    return int((obj.get("status") or {}).get("observedGeneration") or 0) >= generation > 0


async def _acted(kube: KubeClient) -> bool:
    deployment = await kube.request("GET", DEPLOYMENTS.path(namespace=NAMESPACE, name=PROBE))
    if not observed(deployment):
        return False
    sets = await kube.request("GET", REPLICA_SETS.path(namespace=NAMESPACE),
                              query={"labelSelector": f"app={PROBE}"})
    uid = deployment["metadata"]["uid"]  # not an earlier probe's ReplicaSet, not yet collected
    return any(observed(item) for item in sets.get("items") or []
               if any(ref.get("uid") == uid
                      for ref in item["metadata"].get("ownerReferences") or []))


async def _wait(kube: KubeClient, *, timeout_s: float) -> float:
    started = time.monotonic()
    path = DEPLOYMENTS.path(namespace=NAMESPACE, name=PROBE)
    await delete(kube, path)  # a probe a crash left behind would be observed already
    await kube.request("POST", DEPLOYMENTS.path(namespace=NAMESPACE), body=probe_deployment())
    try:
        while not await _acted(kube):
            if time.monotonic() - started > timeout_s:
                raise EnvironmentStateError(
                    f"kube-controller-manager's controllers did not act on a probe Deployment "
                    f"within {timeout_s:.0f}s of its restart",
                    hint="look at the kube-controller-manager log of the environment")
            await asyncio.sleep(POLL_S)
    finally:
        await delete(kube, path)  # apps/v1 collects its ReplicaSet in the background
    return time.monotonic() - started


async def _run(kubeconfig: Path, timeout_s: float) -> float:
    kube = await KubeClient.connect(kubeconfig=kubeconfig)
    try:
        return await _wait(kube, timeout_s=timeout_s)
    except ApiError as exc:
        raise EnvironmentStateError(
            f"could not probe kube-controller-manager's controllers: {exc}") from None
    finally:
        await kube.close()


def wait_for_controllers(*, kubeconfig: Path, timeout_s: float = TIMEOUT_S) -> float:
    """Block until the controller-manager's controllers act; the seconds it took."""
    return asyncio.run(_run(kubeconfig, timeout_s))
