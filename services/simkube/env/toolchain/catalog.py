"""What upstream binaries the environment needs and how each is built from Go modules.

Each ``BuildGroup`` is one small wrapper Go module under ``toolchain/`` with a checked-in
``go.mod``/``go.sum`` that pins the upstream module (and, for Kubernetes, replaces its
staging modules with their published releases). Binaries of one group share a build so Go
compiles their common packages once. A wrapper may also hold Go source of its own
(Karpenter's: a main that runs it at a replay's speed); its ``.go`` files are then part of
the cache key. A group may also keep *assets*: files of a module it builds (such as
Karpenter's CRDs), copied from the very module version the binary was built from.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from simkube.core.version import UPSTREAM
from simkube.env.toolchain.stamps import helm_stamps, kubernetes_stamps

TOOLCHAIN_DIR = Path(__file__).resolve().parent  # beside this module: one Go module per group


class Binary(StrEnum):
    ETCD = "etcd"
    KUBE_APISERVER = "kube-apiserver"
    KUBE_CONTROLLER_MANAGER = "kube-controller-manager"
    KUBE_SCHEDULER = "kube-scheduler"
    KUBECTL = "kubectl"
    KWOK = "kwok"
    KWOKCTL = "kwokctl"
    CLUSTER_AUTOSCALER = "cluster-autoscaler"
    METRICS_SERVER = "metrics-server"  # the wrapper: resolutions under 10 s, KWOK's kubelets
    KARPENTER = "karpenter-kwok"  # Karpenter with its KWOK cloud provider
    HELM = "helm"  # renders and lints deploy/helm/simkube (tests and docs/helm.md)
    CLOUDPROV_FRONT = "sk-cloudprov-front"  # ours: CA's cached front to sk-cloudprov


@dataclass(frozen=True, kw_only=True)
class BuildGroup:
    name: str
    version: str
    packages: dict[Binary, str]
    ldflags: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    optional: bool = False
    # (module, path inside it) of files kept in the cache entry's ``assets/`` by base name.
    assets: tuple[tuple[str, str], ...] = ()
    # Sibling modules under ``toolchain/`` that the wrapper replaces into its build (``replace
    # ... => ../name``): their go.mod and own sources are part of the cache key too.
    shared: tuple[str, ...] = ()
    module_dir: Path = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "module_dir", TOOLCHAIN_DIR / self.name)

    @property
    def fingerprint(self) -> str:
        """Changes whenever the pinned modules or build flags change, so the cache misses."""
        digest = hashlib.sha256()
        for name in ("go.mod", "go.sum"):
            path = self.module_dir / name
            digest.update(path.read_bytes() if path.is_file() else b"<missing>")
        digest.update(repr((sorted(self.packages.items()), self.ldflags, self.tags)).encode())
        # The wrapper's own Go source (tests apart: they are not in the binary). Hashed only
        # where there is some, so the groups without any kept their cache keys.
        for path in self.sources:
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
        if self.assets:  # only then, so adding the field kept other groups' cache keys
            digest.update(repr(self.assets).encode())
        return digest.hexdigest()[:12]

    @property
    def sources(self) -> list[Path]:
        """The project's own Go the build compiles, in a stable order: the wrapper's non-test
        ``.go`` files, then each shared module's go.mod and non-test ``.go`` files."""
        paths = _go_sources(self.module_dir)
        for name in self.shared:
            paths += [TOOLCHAIN_DIR / name / "go.mod", *_go_sources(TOOLCHAIN_DIR / name)]
        return paths

    @property
    def cache_key(self) -> str:
        return f"{self.name}-{self.version}-{self.fingerprint}"


def _go_sources(directory: Path) -> list[Path]:
    return sorted(path for path in directory.glob("*.go") if not path.name.endswith("_test.go"))


KUBERNETES = BuildGroup(
    name="kubernetes",
    version=UPSTREAM.kubernetes,
    packages={
        Binary.KUBE_APISERVER: "k8s.io/kubernetes/cmd/kube-apiserver",
        Binary.KUBE_CONTROLLER_MANAGER: "k8s.io/kubernetes/cmd/kube-controller-manager",
        Binary.KUBECTL: "k8s.io/kubernetes/cmd/kubectl",
    },
    ldflags=kubernetes_stamps(UPSTREAM.kubernetes),
)
# The scheduler is its own wrapper (toolchain/kube-scheduler): upstream's command with the
# scheduling queue on the replay's clock (SIMKUBE_SPEED; the real one at speed 1), so pods'
# backoffs last trace time, not whole seconds of wall time. Same pins as KUBERNETES.
KUBE_SCHEDULER = BuildGroup(
    name="kube-scheduler",
    version=UPSTREAM.kubernetes,
    packages={Binary.KUBE_SCHEDULER: "simkube.local/toolchain/kube-scheduler"},
    ldflags=kubernetes_stamps(UPSTREAM.kubernetes),
    shared=("pacing",),
)
ETCD = BuildGroup(
    name="etcd",
    version=UPSTREAM.etcd,
    packages={Binary.ETCD: "go.etcd.io/etcd/server/v3"},
)
KWOK = BuildGroup(
    name="kwok",
    version=UPSTREAM.kwok,
    packages={
        Binary.KWOK: "sigs.k8s.io/kwok/cmd/kwok",
        Binary.KWOKCTL: "sigs.k8s.io/kwok/cmd/kwokctl",
    },
    # The usage KWOK emulates for metrics-server (env up --metrics-server): the driver writes
    # one ClusterResourceUsage per workload, which KWOK watches when this CRD is installed.
    assets=(("sigs.k8s.io/kwok",
             "kustomize/crd/bases/kwok.x-k8s.io_clusterresourceusages.yaml"),),
)
# Upstream's command refuses --metric-resolution under 10 s and scrapes kubelets at their node
# addresses; the wrapper's main accepts a resolution divided by the replay's speed and routes
# kubelet requests to KWOK's per-node paths (toolchain/metrics-server/main.go).
METRICS_SERVER = BuildGroup(
    name="metrics-server",
    version=UPSTREAM.metrics_server,
    packages={Binary.METRICS_SERVER: "simkube.local/toolchain/metrics-server"},
)
# Not upstream's: the project's own grpc-go server between CA and sk-cloudprov
# (toolchain/cloudprov-front, docs/cloudprov.md), built like the wrappers from the module
# proxy; its version names the front's revision, its sources are in the fingerprint.
CLOUDPROV_FRONT = BuildGroup(
    name="cloudprov-front",
    version="v1",
    packages={Binary.CLOUDPROV_FRONT: "simkube.local/toolchain/cloudprov-front"},
)
CLUSTER_AUTOSCALER = BuildGroup(
    name="cluster-autoscaler",
    version=UPSTREAM.cluster_autoscaler,
    packages={Binary.CLUSTER_AUTOSCALER: "k8s.io/autoscaler/cluster-autoscaler"},
    tags=("externalgrpc", "kwok"),
    optional=True,
)

_KARPENTER_MODULE = "sigs.k8s.io/karpenter"
KARPENTER = BuildGroup(
    name="karpenter",
    version=UPSTREAM.karpenter,
    # The wrapper's own main, not upstream's sigs.k8s.io/karpenter/kwok: the same operator,
    # provider and controllers, with its waits at the replay's speed (SIMKUBE_SPEED).
    packages={Binary.KARPENTER: "simkube.local/toolchain/karpenter"},
    shared=("pacing",),  # its clocks, shared with the scheduler's wrapper
    # The CRDs its KWOK provider serves: NodePools, NodeClaims, NodeOverlays, KWOKNodeClasses.
    assets=tuple((_KARPENTER_MODULE, path) for path in (
        "kwok/charts/crds/karpenter.sh_nodepools.yaml",
        "kwok/charts/crds/karpenter.sh_nodeclaims.yaml",
        "kwok/charts/crds/karpenter.sh_nodeoverlays.yaml",
        "kwok/apis/crds/karpenter.kwok.sh_kwoknodeclasses.yaml")),
)

_CERT_MANAGER_MODULE = "github.com/cert-manager/cert-manager"
HELM = BuildGroup(
    name="helm",
    version=UPSTREAM.helm,
    packages={Binary.HELM: "helm.sh/helm/v3/cmd/helm"},
    ldflags=helm_stamps(UPSTREAM.helm, go_mod=TOOLCHAIN_DIR / "helm" / "go.mod"),
    # cert-manager's CRDs, for the chart's cert-manager TLS option: its Certificates and
    # Issuers are applied to the local control plane against the real schemas. The wrapper
    # pins v1.19.4, the newest whose module leaves helm's own dependencies where they are.
    assets=tuple((_CERT_MANAGER_MODULE, f"deploy/crds/cert-manager.io_{kind}.yaml")
                 for kind in ("certificates", "issuers", "clusterissuers")),
)


# metrics-server, the cloudprov front, Karpenter and helm are served by the module proxy, so
# unlike CA they are part of every build. The order is the build order: what every
# environment needs first (the control plane, smallest first, so a proxy problem shows within
# a minute, not after Kubernetes' quarter of an hour), then metrics-server (HPAs), the front
# (CA's, seconds to build) and the autoscaler the demo runs, then what only tests use (helm).
CONTROL_PLANE: tuple[BuildGroup, ...] = (ETCD, KWOK, KUBERNETES, KUBE_SCHEDULER)
CORE_GROUPS: tuple[BuildGroup, ...] = (*CONTROL_PLANE, METRICS_SERVER, CLOUDPROV_FRONT,
                                       KARPENTER, HELM)
ALL_GROUPS: tuple[BuildGroup, ...] = (*CORE_GROUPS, CLUSTER_AUTOSCALER)


def plan_builds(*, only: Collection[str] = (), autoscaler: bool = False) -> tuple[BuildGroup, ...]:
    """The groups to build, in build order: ``only`` those named (``make demo`` asks for what
    it runs), else the core ones and, with ``autoscaler``, Cluster Autoscaler."""
    if not only:
        return ALL_GROUPS if autoscaler else CORE_GROUPS
    known = {group.name: group for group in ALL_GROUPS}
    unknown = sorted(set(only) - set(known))
    if unknown:
        raise ValueError(f"no build group named {', '.join(unknown)} "
                       f"(known: {', '.join(known)})")
    return tuple(group for group in ALL_GROUPS if group.name in only)


def group_of(binary: Binary) -> BuildGroup:
    for group in ALL_GROUPS:
        if binary in group.packages:
            return group
    raise KeyError(binary)
