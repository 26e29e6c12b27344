"""metrics-server in a local environment, scraping KWOK's fake kubelets (``env up
--metrics-server``), so ``kubectl top`` and the HorizontalPodAutoscaler controller see usage.

The pieces, in start order:
- KWOK's ``ClusterResourceUsage`` CRD, applied before KWOK starts: KWOK watches those objects
  (``--enable-crds``) and the driver writes one per workload with recorded usage;
- a ``Metric`` in KWOK's configuration that serves each node's ``/metrics/resource`` as a
  kubelet would, with the four series metrics-server decodes (container and node CPU as
  cumulative core-seconds, working-set memory as a gauge);
- the project's metrics-server (``toolchain/metrics-server``): it reaches every node by its
  Hostname address and routes the request to KWOK's per-node path, so nodes made by any
  autoscaler need no annotation; KWOK's server is plain HTTP on loopback;
- the aggregation layer: a Service of type ExternalName (Endpoints cannot hold a loopback
  address) naming 127.0.0.1 and the metrics-server port, and the APIService
  ``v1beta1.metrics.k8s.io`` trusting the environment's CA, which signed the serving cert.

Health is ``/livez`` (``/readyz`` waits for two scrapes of some node, and an environment may
start with none); usable is the APIService reported Available. The resolution and the
kubelet request timeout are timers (``core.timers``): a run at speed *s* restarts
metrics-server with both divided by *s* (``env/retiming.py``).
"""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import Any

from simkube.core.config import load_yaml_mapping
from simkube.core.durations import go_duration
from simkube.core.errors import EnvironmentStateError
from simkube.core.kubeapi import (
    API_SERVICES,
    CUSTOM_RESOURCE_DEFINITIONS,
    SERVICES,
    ApiError,
    KubeClient,
    apply,
    poll,
)
from simkube.core.timers import METRICS_SERVER as TIMERS
from simkube.env.controlplane.certs import METRICS_SERVER as IDENTITY
from simkube.env.controlplane.components import Component, ComponentSpec, Layout, Ports
from simkube.env.ports import LOOPBACK
from simkube.env.toolchain.cache import asset_paths, binary_path
from simkube.env.toolchain.catalog import KWOK, Binary

FIELD_MANAGER = "simkube"
NAMESPACE = "kube-system"
SERVICE_NAME = "metrics-server"
API_SERVICE_NAME = "v1beta1.metrics.k8s.io"
READY_TIMEOUT = 60.0
# KWOK's Metric: what metrics-server reads from a kubelet's /metrics/resource (its decoder
# takes these four series by name), with CPU integrated by KWOK over wall time. KWOK starts a
# container's counter at zero on its first read, and metrics-server drops a zero reading as
# invalid, so a new pod's first rate would come one scrape later than from a kubelet, whose
# counter holds what the container used since it started: a fixed micro-core-second on top
# makes the first read count, and cancels out of every rate. The project's metrics-server
# stamps each node's readings with simkube_kwok_read_at_seconds, the moment KWOK read its
# counters, instead of its own request time: a rate over a replay's 0.2 s scrapes is then the
# usage to within microseconds, not within the request's jitter (toolchain/metrics-server/
# readtime.go). It is read right after the container counters, in the order KWOK evaluates.
KWOK_METRIC = """apiVersion: kwok.x-k8s.io/v1alpha1
kind: Metric
metadata:
  name: kubelet-resource-metrics
spec:
  path: /metrics/nodes/{nodeName}/metrics/resource
  metrics:
  - {name: container_cpu_usage_seconds_total, kind: counter, dimension: container,
     help: "Cumulative CPU of the container in core-seconds",
     labels: [{name: container, value: container.name},
              {name: namespace, value: pod.metadata.namespace},
              {name: pod, value: pod.metadata.name}],
     value: 'pod.CumulativeUsage("cpu", container.name) + 0.000001'}
  - {name: simkube_kwok_read_at_seconds, kind: gauge, dimension: node,
     help: "When KWOK read the series above (Unix seconds)", value: 'Now().UnixSecond()'}
  - {name: container_memory_working_set_bytes, kind: gauge, dimension: container,
     help: "Working set of the container in bytes",
     labels: [{name: container, value: container.name},
              {name: namespace, value: pod.metadata.namespace},
              {name: pod, value: pod.metadata.name}],
     value: 'pod.Usage("memory", container.name)'}
  - {name: node_cpu_usage_seconds_total, kind: counter, dimension: node,
     help: "Cumulative CPU of the node in core-seconds", value: 'node.CumulativeUsage("cpu")'}
  - {name: node_memory_working_set_bytes, kind: gauge, dimension: node,
     help: "Working set of the node in bytes", value: 'node.Usage("memory")'}
"""


def metrics_server_spec(layout: Layout, ports: Ports) -> ComponentSpec:
    """Its command line at speed 1 (the timers' production defaults)."""
    pki, kubeconfig = layout.pki, layout.kubeconfig_for(IDENTITY.file_stem)
    timers = [f"--{timer.name}={go_duration(timer.default_ms)}" for timer in TIMERS]
    return ComponentSpec(
        component=Component.METRICS_SERVER, port=ports.metrics_server,
        health_url=f"https://{LOOPBACK}:{ports.metrics_server}/livez", argv=[
            str(binary_path(Binary.METRICS_SERVER)), f"--kubeconfig={kubeconfig}",
            f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            f"--bind-address={LOOPBACK}", f"--secure-port={ports.metrics_server}",
            f"--tls-cert-file={pki / 'metrics-server-serving.crt'}",
            f"--tls-private-key-file={pki / 'metrics-server-serving.key'}",
            f"--kwok-address={LOOPBACK}:{ports.kwok}",
            "--kubelet-preferred-address-types=Hostname",
            "--deprecated-kubelet-completely-insecure", *timers])


def usage_crds() -> list[dict[str, Any]]:
    """KWOK's ClusterResourceUsage CRD, from the KWOK build the environment runs."""
    return [load_yaml_mapping(path, what="KWOK CRD") for path in asset_paths(KWOK)]


def manifests(*, port: int, ca_bundle: bytes) -> list[tuple[str, dict[str, Any]]]:
    """(path, object) of the Service and APIService that route metrics.k8s.io to it."""
    service = {"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": SERVICE_NAME, "namespace": NAMESPACE},
               "spec": {"type": "ExternalName", "externalName": LOOPBACK,
                        "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}}
    api_service = {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
                   "metadata": {"name": API_SERVICE_NAME},
                   "spec": {"group": "metrics.k8s.io", "version": "v1beta1",
                            "groupPriorityMinimum": 100, "versionPriority": 100,
                            "caBundle": base64.b64encode(ca_bundle).decode(),
                            "service": {"namespace": NAMESPACE, "name": SERVICE_NAME,
                                        "port": port}}}
    return [(SERVICES.path(namespace=NAMESPACE, name=SERVICE_NAME), service),
            (API_SERVICES.path(name=API_SERVICE_NAME), api_service)]


def _condition(obj: dict[str, Any], kind: str) -> bool:
    return any(c.get("type") == kind and c.get("status") == "True"
               for c in (obj.get("status") or {}).get("conditions") or [])


async def _apply_waiting(kubeconfig: Path, objects: list[tuple[str, dict[str, Any]]], *,
                         condition: str, what: str, write: bool = True) -> None:
    kube = await KubeClient.connect(kubeconfig=kubeconfig)
    try:
        for path, manifest in objects if write else ():
            await apply(kube, path, manifest, field_manager=FIELD_MANAGER)
        for path, _ in objects:
            async def met(path: str = path) -> bool:
                return _condition(await kube.request("GET", path), condition)
            if condition and not await poll(met, timeout=READY_TIMEOUT, interval=0.2):
                last = await kube.request("GET", path)
                raise EnvironmentStateError(
                    f"{what} {path.rsplit('/', 1)[-1]} was not {condition} within "
                    f"{READY_TIMEOUT:.0f}s: {(last.get('status') or {}).get('conditions')}")
    except ApiError as exc:
        raise EnvironmentStateError(f"setting up {what} failed: {exc}") from None
    finally:
        await kube.close()


def install_usage_crds(kubeconfig: Path) -> None:
    """KWOK's usage CRD, established before KWOK starts watching it."""
    objects = [(CUSTOM_RESOURCE_DEFINITIONS.path(name=crd["metadata"]["name"]), crd)
               for crd in usage_crds()]
    asyncio.run(_apply_waiting(kubeconfig, objects, condition="Established",
                               what="KWOK's usage CRD"))


def wait_available(*, kubeconfig: Path) -> None:
    """Until the aggregator finds metrics.k8s.io Available again (after a restart)."""
    objects: list[tuple[str, dict[str, Any]]] = [(API_SERVICES.path(name=API_SERVICE_NAME), {})]
    asyncio.run(_apply_waiting(kubeconfig, objects, condition="Available",
                               what="metrics-server's APIService", write=False))


def register(layout: Layout, *, port: int) -> None:
    """The APIService (and its Service), waited for until the aggregator finds it Available."""
    objects = manifests(port=port, ca_bundle=(layout.pki / "ca.crt").read_bytes())
    asyncio.run(_apply_waiting(layout.admin_kubeconfig, objects[:1], condition="",
                               what="metrics-server's Service"))
    asyncio.run(_apply_waiting(layout.admin_kubeconfig, objects[1:], condition="Available",
                               what="metrics-server's APIService"))
