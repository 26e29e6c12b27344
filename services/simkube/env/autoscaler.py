"""Cluster Autoscaler (CA) in a local environment: its binary, cloud-config and command line.

CA talks to sk-cloudprov through its ``externalgrpc`` cloud provider. It cannot be built on
this machine (issue #6: the Go module proxy refuses ``k8s.io/autoscaler/cluster-autoscaler``),
so ``env up --autoscaler`` checks for the binary before anything starts and refuses with a
plain explanation instead of a half-started environment. The command line is complete all the
same, so the environment runs CA the day a binary lands in the cache. Timings are shortened
from CA's production defaults (10 s scans, 10 min before scale-down) so that a replay at 10x
shows scale-ups and scale-downs within minutes.
"""

from __future__ import annotations

from pathlib import Path

from simkube.core.errors import EnvironmentStateError
from simkube.env.cache import EntryState, entry_dir, verify
from simkube.env.catalog import CLUSTER_AUTOSCALER, Binary
from simkube.env.components import Layout
from simkube.env.ports import LOOPBACK
from simkube.env.services import ServiceSpec

NAME = "cluster-autoscaler"
GRPC_TIMEOUT = "10s"  # per call; CA's default of 5s leaves little room on a loaded laptop
DOCS = "docs/cloudprov.md"


def require_binary() -> Path:
    """The cached CA binary, or an ``EnvironmentStateError`` (exit 3) saying why there is none."""
    check = verify(CLUSTER_AUTOSCALER)
    if check.state is EntryState.READY:
        return entry_dir(CLUSTER_AUTOSCALER) / Binary.CLUSTER_AUTOSCALER.value
    found = ("is not in the binary cache" if check.state is EntryState.MISSING
             else f"has a corrupt cache entry ({check.reason})")
    raise EnvironmentStateError(
        f"cannot start the environment with --autoscaler: cluster-autoscaler "
        f"{CLUSTER_AUTOSCALER.version} {found} (looked in {entry_dir(CLUSTER_AUTOSCALER)}), "
        "and it cannot be built on this machine: the Go module proxy refuses "
        "k8s.io/autoscaler/cluster-autoscaler (issue #6). Nothing was started.",
        hint=f"see {DOCS} ('Using it with Cluster Autoscaler'); 'skctl env up --services' "
             "starts everything else, and node groups can be resized by hand")


def cloud_config_path(layout: Layout) -> Path:
    return layout.root / "autoscaler-cloud-config.yaml"


def cloud_config(*, cloudprov_address: str) -> str:
    """The externalgrpc cloud-config: sk-cloudprov's address, plaintext on loopback."""
    return (f"# written by skctl env up --autoscaler\naddress: {cloudprov_address}\n"
            f"grpc_timeout: {GRPC_TIMEOUT}\n")


def write_cloud_config(*, layout: Layout, cloudprov_address: str) -> Path:
    path = cloud_config_path(layout)
    path.write_text(cloud_config(cloudprov_address=cloudprov_address))
    return path


def autoscaler_spec(*, binary: Path, layout: Layout, port: int) -> ServiceSpec:
    """CA's command line; healthy when ``/health-check`` on its ``--address`` answers 200."""
    return ServiceSpec(name=NAME, port=port,
                       health_url=f"http://{LOOPBACK}:{port}/health-check", argv=[
        str(binary), "--cloud-provider=externalgrpc",
        f"--cloud-config={cloud_config_path(layout)}",
        f"--kubeconfig={layout.admin_kubeconfig}", f"--address={LOOPBACK}:{port}",
        "--leader-elect=false", "--scan-interval=2s",
        # Scale down soon after the load goes: minutes of trace time are seconds here.
        "--scale-down-enabled=true", "--scale-down-delay-after-add=30s",
        "--scale-down-delay-after-delete=0s", "--scale-down-delay-after-failure=10s",
        "--scale-down-unneeded-time=30s", "--scale-down-unready-time=1m",
        "--max-node-provision-time=2m", "--max-nodes-total=1000",
        # Fake nodes have no local storage or system pods worth protecting.
        "--skip-nodes-with-local-storage=false", "--skip-nodes-with-system-pods=false",
        "--expander=least-waste", "--balance-similar-node-groups=false",
        "--kube-client-qps=100", "--kube-client-burst=200", "--v=2"])
