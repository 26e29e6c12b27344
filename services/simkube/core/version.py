"""One place for the product's version and the upstream versions it is built and tested with.

The upstream versions are pinned together because they must fit: the Kubernetes control plane,
the etcd it talks to, the KWOK that fakes its nodes and the autoscalers (Cluster Autoscaler,
Karpenter) that scale them. Helm is here too: the chart is tested with the version pinned.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata

DISTRIBUTION = "simkube-py"


def product_version() -> str:
    """The installed distribution's version, or ``0+unknown`` when run from a bare checkout."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "0+unknown"


@dataclass(frozen=True, kw_only=True)
class UpstreamVersions:
    kubernetes: str = "v1.36.3"
    etcd: str = "v3.6.14"
    kwok: str = "v0.8.0"
    cluster_autoscaler: str = "1.36.1"
    karpenter: str = "v1.13.0"  # its KWOK provider; v1.14+ declares a Go newer than 1.26.8
    metrics_server: str = "v0.8.0"  # what HPAs read usage from (KWOK serves the kubelets)
    helm: str = "v3.22.0"  # renders and lints deploy/helm/simkube in the tests only


UPSTREAM = UpstreamVersions()
