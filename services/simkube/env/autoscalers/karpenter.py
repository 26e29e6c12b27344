"""Karpenter in a local environment: its CRDs, NodePools, instance types and command line.

``skctl env up --autoscaler karpenter`` runs Karpenter's KWOK provider (built by ``skctl env
build`` at the pinned version, with the CRDs of that same module version) as a supervised
process instead of sk-cloudprov and Cluster Autoscaler. What it may launch comes from the
node-groups file both autoscalers share (``karpenter_catalog``). Karpenter v1 core has no
webhooks, so none are served; leader election is off (one replica). Its kubeconfig comes from
``KUBECONFIG``: its own flag set has no ``--kubeconfig``, so the argv starts with ``env``, and
a supervisor restart (which reuses the argv) keeps it. The same ``env`` carries
the run's speed (``run_argv``, ``env.pacing``): the project's Karpenter main divides its own
waits by it. Karpenter binds its metrics and health
ports on every interface (``:PORT`` is hard-wired upstream); the ports are free ones.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from simkube.cloudprov.config import CloudConfig
from simkube.core.config import load_yaml_mapping
from simkube.core.errors import EnvironmentStateError
from simkube.core.flags import with_flags
from simkube.core.kubeapi import (
    APPLY_PATCH,
    CUSTOM_RESOURCE_DEFINITIONS,
    KWOK_NODE_CLASSES,
    NAMESPACES,
    NODE_POOLS,
    ApiError,
    KubeClient,
    poll,
)
from simkube.core.simtime import REAL_TIME, TimerPlan, TimeScale
from simkube.core.timers import Component
from simkube.env.autoscalers import flagmerge
from simkube.env.autoscalers.karpenter_catalog import Disruption, instance_types, manifests
from simkube.env.controlplane.components import Layout
from simkube.env.pacing import env_binary, paced_argv
from simkube.env.ports import LOOPBACK
from simkube.env.services.commands import ServiceSpec
from simkube.env.toolchain.cache import asset_paths, binary_path
from simkube.env.toolchain.catalog import KARPENTER, Binary

NAME = "karpenter"
FIELD_MANAGER = "simkube"
CRD_TIMEOUT = 30.0
# Production defaults; a Simulation's run divides them by its speed (core.timers).
DEFAULT_FLAGS = ("--batch-idle-duration=1s", "--batch-max-duration=10s", "--log-level=info",
                 "--kube-client-qps=200", "--kube-client-burst=300")
WIRING = ("--metrics-port", "--health-probe-port", "--instance-types-file-path",
          "--disable-leader-election", "--leader-election-namespace")
RESOURCES = {resource.kind: resource for resource in (NODE_POOLS, KWOK_NODE_CLASSES)}


def instance_types_path(layout: Layout) -> Path:
    return layout.root / "karpenter-instance-types.json"


def write_instance_types(*, layout: Layout, config: CloudConfig) -> Path:
    path = instance_types_path(layout)
    path.write_text(json.dumps(instance_types(config), indent=1))
    return path


def merge_flags(extra: tuple[str, ...]) -> list[str]:
    """The default flags with ``extra`` (``--name=value`` each) replacing same-named ones."""
    return flagmerge.merge_flags(defaults=DEFAULT_FLAGS, extra=extra, wiring=WIRING,
                                 owner="Karpenter", example="--batch-max-duration=20s")


def karpenter_spec(*, layout: Layout, health_port: int, metrics_port: int,
                   extra: tuple[str, ...] = ()) -> ServiceSpec:
    """Karpenter's command line; healthy when ``/readyz`` answers (caches synced, CRDs known)."""
    return ServiceSpec(name=NAME, port=health_port,
                       health_url=f"http://{LOOPBACK}:{health_port}/readyz", argv=[
        env_binary(), f"KUBECONFIG={layout.admin_kubeconfig}", str(binary_path(Binary.KARPENTER)),
        "--disable-leader-election", f"--metrics-port={metrics_port}",
        f"--health-probe-port={health_port}",
        f"--instance-types-file-path={instance_types_path(layout)}", *merge_flags(extra)])


def run_argv(base: list[str], *, plan: TimerPlan, skip: Iterable[str] = (),
             run_configmap: str = "") -> list[str]:
    """Karpenter's command line for a run: the run's speed and hold ConfigMap for its clocks
    (``env.pacing``; left out at speed 1, so a ground-truth run is upstream's behaviour) and
    its batching flags in *trace* time: its batcher waits through the clock that the speed
    already divides (the catalogue's timers are ``paced``). ``skip``: timers it reads
    elsewhere (consolidateAfter, from its NodePools)."""
    flags = plan.flags(Component.KARPENTER, skip=skip)
    return paced_argv(with_flags(base, flags=flags), scale=plan.scale,
                      run_configmap=run_configmap)


def crds() -> list[dict[str, Any]]:
    """The CRDs of the Karpenter version the binary was built from (the cache's assets)."""
    return [load_yaml_mapping(path, what="Karpenter CRD") for path in asset_paths(KARPENTER)]


async def _apply(kube: KubeClient, path: str, manifest: dict[str, Any]) -> None:
    await kube.request("PATCH", path, body=manifest, content_type=APPLY_PATCH,
                       query={"fieldManager": FIELD_MANAGER, "force": "true"})


async def _install(kubeconfig: Path, config: CloudConfig, disruption: Disruption,
                   scale: TimeScale, with_crds: bool) -> None:
    kube = await KubeClient.connect(kubeconfig=kubeconfig)
    try:
        if with_crds:
            # sk-ctrl publishes each run's speed and holds in a ConfigMap of the node groups'
            # namespace (sk-cloudprov's, when that runs), which the build's clocks follow.
            await _apply(kube, NAMESPACES.path(name=config.namespace), {
                "apiVersion": "v1", "kind": "Namespace", "metadata": {
                    "name": config.namespace,
                    "labels": {"app.kubernetes.io/part-of": "simkube"}}})
            for crd in crds():
                name = crd["metadata"]["name"]
                path = CUSTOM_RESOURCE_DEFINITIONS.path(name=name)
                await _apply(kube, path, crd)

                async def established(path: str = path) -> bool:
                    status = (await kube.request("GET", path)).get("status") or {}
                    return any(c.get("type") == "Established" and c.get("status") == "True"
                               for c in status.get("conditions") or [])
                if not await poll(established, timeout=CRD_TIMEOUT, interval=0.2):
                    raise EnvironmentStateError(f"CRD {name} was not established within "
                                                f"{CRD_TIMEOUT:.0f}s")
        for manifest in manifests(config, disruption=disruption, scale=scale):
            resource = RESOURCES[manifest["kind"]]
            await _apply(kube, resource.path(name=manifest["metadata"]["name"]), manifest)
    except ApiError as exc:
        raise EnvironmentStateError(f"setting up Karpenter's resources failed: {exc}") from None
    finally:
        await kube.close()


def install(*, kubeconfig: Path, config: CloudConfig, disruption: Disruption) -> None:
    """CRDs (waited for until established), node classes and NodePools, at speed 1."""
    asyncio.run(_install(kubeconfig, config, disruption, REAL_TIME, True))


def apply_pools(*, kubeconfig: Path, config: CloudConfig, disruption: Disruption,
                scale: TimeScale) -> None:
    """Node classes and NodePools with their durations at ``scale`` (a run's), or back at 1."""
    asyncio.run(_install(kubeconfig, config, disruption, scale, False))
