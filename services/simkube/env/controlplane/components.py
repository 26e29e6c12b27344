"""The command lines of the environment's components, each bound to loopback only.

Choices that matter for a simulator rather than a production cluster are made here and
explained where they are made: no fsync in etcd (the data is disposable), raised client rate
limits (a replay creates thousands of objects a second), no leader election (one replica).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from simkube.env.controlplane.certs import FRONT_PROXY_CLIENT, SERVICE_IP
from simkube.env.ports import LOOPBACK
from simkube.env.toolchain.cache import binary_path
from simkube.env.toolchain.catalog import Binary

SERVICE_CIDR = "10.96.0.0/16"
POD_CIDR = "10.244.0.0/16"
FAKE_NODE_ANNOTATION = "kwok.x-k8s.io/node"
FAKE_NODE_VALUE = "fake"
CLIENT_QPS = "1000"
CLIENT_BURST = "2000"


class Component(StrEnum):
    ETCD = "etcd"
    KUBE_APISERVER = "kube-apiserver"
    KUBE_CONTROLLER_MANAGER = "kube-controller-manager"
    KUBE_SCHEDULER = "kube-scheduler"
    KWOK = "kwok"
    METRICS_SERVER = "metrics-server"  # only with env up --metrics-server


@dataclass(frozen=True, kw_only=True)
class Layout:
    """Every path inside one environment's directory."""

    root: Path

    @property
    def pki(self) -> Path:
        return self.root / "pki"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def etcd_data(self) -> Path:
        return self.root / "etcd-data"

    @property
    def admin_kubeconfig(self) -> Path:
        return self.root / "kubeconfig"

    def kubeconfig_for(self, stem: str) -> Path:
        return self.root / f"{stem}.kubeconfig"

    @property
    def scheduler_config(self) -> Path:
        return self.root / "scheduler-config.yaml"

    @property
    def kwok_config(self) -> Path:
        return self.root / "kwok.yaml"


@dataclass(frozen=True, kw_only=True)
class Ports:
    etcd_client: int
    etcd_peer: int
    apiserver: int
    controller_manager: int
    scheduler: int
    kwok: int
    metrics_server: int = 0  # 0: the environment runs no metrics-server


@dataclass(frozen=True, kw_only=True)
class ComponentSpec:
    component: Component
    argv: list[str]
    port: int
    health_url: str


def _etcd(layout: Layout, ports: Ports) -> ComponentSpec:
    client = f"http://{LOOPBACK}:{ports.etcd_client}"
    peer = f"http://{LOOPBACK}:{ports.etcd_peer}"
    return ComponentSpec(component=Component.ETCD, port=ports.etcd_client,
                         health_url=f"{client}/health", argv=[
        str(binary_path(Binary.ETCD)), "--name=simkube", f"--data-dir={layout.etcd_data}",
        f"--listen-client-urls={client}", f"--advertise-client-urls={client}",
        f"--listen-peer-urls={peer}", f"--initial-advertise-peer-urls={peer}",
        f"--initial-cluster=simkube={peer}",
        # A simulated cluster is disposable: trading durability for speed is the right call.
        "--unsafe-no-fsync=true", "--quota-backend-bytes=8589934592",
        "--log-level=warn"])


def _apiserver(layout: Layout, ports: Ports) -> ComponentSpec:
    pki = layout.pki
    return ComponentSpec(component=Component.KUBE_APISERVER, port=ports.apiserver,
                         health_url=f"https://{LOOPBACK}:{ports.apiserver}/readyz", argv=[
        str(binary_path(Binary.KUBE_APISERVER)),
        f"--etcd-servers=http://{LOOPBACK}:{ports.etcd_client}",
        f"--bind-address={LOOPBACK}", f"--advertise-address={LOOPBACK}",
        f"--secure-port={ports.apiserver}",
        f"--tls-cert-file={pki / 'apiserver.crt'}",
        f"--tls-private-key-file={pki / 'apiserver.key'}",
        f"--client-ca-file={pki / 'ca.crt'}",
        f"--service-account-key-file={pki / 'service-account.pub'}",
        f"--service-account-signing-key-file={pki / 'service-account.key'}",
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        f"--service-cluster-ip-range={SERVICE_CIDR}",
        "--authorization-mode=RBAC", "--allow-privileged=true",
        # Loopback cannot be an Endpoints address, so the apiserver must not publish itself.
        "--endpoint-reconciler-type=none",
        "--max-requests-inflight=2000", "--max-mutating-requests-inflight=1000",
        "--profiling=false", f"--cert-dir={layout.root / 'apiserver-certs'}",
        *aggregation_flags(pki)])


def aggregation_flags(pki: Path) -> list[str]:
    """The aggregation layer, so an APIService (metrics.k8s.io) can be served by another
    process: the front proxy's CA and the one name it may assert users under, and the client
    certificate the API server forwards requests with."""
    return [f"--requestheader-client-ca-file={pki / 'front-proxy-ca.crt'}",
            f"--requestheader-allowed-names={FRONT_PROXY_CLIENT}",
            "--requestheader-username-headers=X-Remote-User",
            "--requestheader-group-headers=X-Remote-Group",
            "--requestheader-extra-headers-prefix=X-Remote-Extra-",
            f"--proxy-client-cert-file={pki / (FRONT_PROXY_CLIENT + '.crt')}",
            f"--proxy-client-key-file={pki / (FRONT_PROXY_CLIENT + '.key')}"]


def _controller_manager(layout: Layout, ports: Ports) -> ComponentSpec:
    kubeconfig = layout.kubeconfig_for("controller-manager")
    return ComponentSpec(component=Component.KUBE_CONTROLLER_MANAGER,
                         port=ports.controller_manager,
                         health_url=f"https://{LOOPBACK}:{ports.controller_manager}/healthz",
                         argv=[
        str(binary_path(Binary.KUBE_CONTROLLER_MANAGER)), f"--kubeconfig={kubeconfig}",
        f"--authentication-kubeconfig={kubeconfig}", f"--authorization-kubeconfig={kubeconfig}",
        f"--bind-address={LOOPBACK}", f"--secure-port={ports.controller_manager}",
        f"--cert-dir={layout.root / 'controller-manager-certs'}",
        "--leader-elect=false", f"--kube-api-qps={CLIENT_QPS}",
        f"--kube-api-burst={CLIENT_BURST}",
        f"--root-ca-file={layout.pki / 'ca.crt'}",
        f"--service-account-private-key-file={layout.pki / 'service-account.key'}",
        f"--service-cluster-ip-range={SERVICE_CIDR}", f"--cluster-cidr={POD_CIDR}",
        # Fake nodes come with their own pod CIDR (or none); nothing to allocate.
        "--allocate-node-cidrs=false", "--controllers=*,-nodeipam"])


def _scheduler(layout: Layout, ports: Ports) -> ComponentSpec:
    kubeconfig = layout.kubeconfig_for("scheduler")
    return ComponentSpec(component=Component.KUBE_SCHEDULER, port=ports.scheduler,
                         health_url=f"https://{LOOPBACK}:{ports.scheduler}/healthz", argv=[
        str(binary_path(Binary.KUBE_SCHEDULER)), f"--config={layout.scheduler_config}",
        # Delegated authentication and authorization, so that /metrics answers the admin
        # certificate (benchmarks read the scheduler's own figures; health paths need none).
        f"--authentication-kubeconfig={kubeconfig}", f"--authorization-kubeconfig={kubeconfig}",
        f"--bind-address={LOOPBACK}", f"--secure-port={ports.scheduler}",
        f"--cert-dir={layout.root / 'scheduler-certs'}"])


def _kwok(layout: Layout, ports: Ports) -> ComponentSpec:
    # With metrics-server, KWOK serves kubelet metrics (the Metric in its configuration) and
    # watches the ClusterResourceUsages the driver writes (driver/usage.py).
    usage = ["--enable-crds=ClusterResourceUsage"] if ports.metrics_server else []
    return ComponentSpec(component=Component.KWOK, port=ports.kwok,
                         health_url=f"http://{LOOPBACK}:{ports.kwok}/healthz", argv=[
        str(binary_path(Binary.KWOK)), f"--kubeconfig={layout.kubeconfig_for('kwok')}",
        f"--config={layout.kwok_config}", "--manage-all-nodes=false",
        f"--manage-nodes-with-annotation-selector={FAKE_NODE_ANNOTATION}={FAKE_NODE_VALUE}",
        f"--server-address={LOOPBACK}:{ports.kwok}", f"--cidr={POD_CIDR}",
        # No node leases: with them KWOK 0.8.0 serves a node's pods only once it holds the
        # node's lease, and drops pods bound in the moments before (docs/kwok.md). The
        # node-heartbeat stage keeps nodes Ready instead.
        "--node-lease-duration-seconds=0", *usage])


def control_plane(layout: Layout, ports: Ports) -> list[ComponentSpec]:
    """Every component in start order (each later one needs the earlier ones healthy);
    metrics-server, when asked for, comes after them (``metrics_server.py``)."""
    return [_etcd(layout, ports), _apiserver(layout, ports), _controller_manager(layout, ports),
            _scheduler(layout, ports), _kwok(layout, ports)]


__all__ = ["SERVICE_IP", "Component", "ComponentSpec", "Layout", "Ports", "control_plane"]
