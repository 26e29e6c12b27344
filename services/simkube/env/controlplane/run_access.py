"""The scheduler's read access to the run's ConfigMap.

The project's scheduler build follows the run's holds (``toolchain/pacing/holdwatch.go``),
which sk-ctrl publishes in the run's ConfigMap. The scheduler talks to the API server as its
own identity (``certs.SCHEDULER``, ``system:kube-scheduler``), whose bootstrap role may not
read ConfigMaps; denied, its watch would retry forever and its clock would never hold. So
before a run restarts it with the ConfigMap named, a Role and RoleBinding in the ConfigMap's
namespace let that identity get, list and watch that one object, nothing else. Applied
server-side, so every run re-applies the same two objects.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from simkube.core.kubeapi import ROLE_BINDINGS, ROLES, KubeClient, apply
from simkube.env.controlplane.certs import SCHEDULER

ROLE = "simkube-run-clock-reader"
FIELD_MANAGER = "simkube"


def parse(run_configmap: str) -> tuple[str, str]:
    """("namespace", "name") of ``namespace/name``; what the scheduler is started with."""
    namespace, _, name = run_configmap.partition("/")
    if not namespace or not name or "/" in name:
        raise ValueError(f"run ConfigMap {run_configmap!r} is not namespace/name")
    return namespace, name


def manifests(run_configmap: str) -> list[tuple[str, dict[str, Any]]]:
    """(path, object) of the Role and RoleBinding that let the scheduler read the ConfigMap."""
    namespace, name = parse(run_configmap)
    meta = {"name": ROLE, "namespace": namespace}
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": meta,
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "resourceNames": [name],
                       "verbs": ["get", "list", "watch"]}]}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": meta,
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                           "name": ROLE},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                             "name": SCHEDULER.user}]}
    return [(ROLES.path(namespace=namespace, name=ROLE), role),
            (ROLE_BINDINGS.path(namespace=namespace, name=ROLE), binding)]


async def _grant(kubeconfig: Path, run_configmap: str) -> None:
    kube = await KubeClient.connect(kubeconfig=kubeconfig)
    try:
        for path, body in manifests(run_configmap):
            await apply(kube, path, body, field_manager=FIELD_MANAGER)
    finally:
        await kube.close()


def grant_scheduler(*, kubeconfig: Path, run_configmap: str) -> None:
    """Let the scheduler read ``run_configmap`` ("namespace/name"), as the cluster admin."""
    asyncio.run(_grant(kubeconfig, run_configmap))
