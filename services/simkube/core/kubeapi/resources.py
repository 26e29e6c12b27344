"""The resource table: each kind we read or write, and the REST paths that serve it.

A ``Resource`` knows its group, version, plural, kind and whether its objects live in a
namespace, and builds every path from those: the collection (all namespaces, or one), an
object, and an object's subresource (``status``, ``binding``). The kinds the services use by
name are constants here; any other kind (a trace may hold custom resources) comes from the
API server through ``discovery.Discovery``. No service writes ``/api/...`` by hand.
"""

from __future__ import annotations

from dataclasses import dataclass


def group_version_path(api_version: str) -> str:
    """Where ``api_version`` is served: ``/api/v1`` for the core group, else ``/apis/g/v``."""
    return f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupVersionKind:
    """A kind as objects name it; the tracer's ``KindKey`` is one, and so is every resource."""

    group: str  # "" for the core group
    version: str
    kind: str

    @property
    def api_version(self) -> str:
        """``apps/v1``, or ``v1`` for the core group: as objects' ``apiVersion`` names it."""
        return f"{self.group}/{self.version}" if self.group else self.version


@dataclass(frozen=True, slots=True, kw_only=True)
class Resource(GroupVersionKind):
    """A kind as the API serves it: under its plural, in a namespace or not."""

    plural: str
    namespaced: bool

    @property
    def crd_name(self) -> str:
        """The name of the CustomResourceDefinition that defines it: ``<plural>.<group>``."""
        return f"{self.plural}.{self.group}"

    def path(self, *, namespace: str = "", name: str = "", subresource: str = "") -> str:
        """The collection, or with ``name`` the object, or with ``subresource`` its part.

        ``namespace`` narrows a namespaced resource to one namespace (without it, the
        collection spans all of them); a cluster-scoped resource ignores it, so an owner's
        namespace can be passed whatever the owner's kind.
        """
        if subresource and not name:
            raise ValueError(f"{self.plural}: subresource {subresource!r} needs an object name")
        parts = [group_version_path(self.api_version)]
        if namespace and self.namespaced:
            parts += ["namespaces", namespace]
        parts.append(self.plural)
        parts += [part for part in (name, subresource) if part]
        return "/".join(parts)


def _core(plural: str, kind: str, *, namespaced: bool) -> Resource:
    return Resource(group="", version="v1", plural=plural, kind=kind, namespaced=namespaced)


PODS = _core("pods", "Pod", namespaced=True)
NODES = _core("nodes", "Node", namespaced=False)
NAMESPACES = _core("namespaces", "Namespace", namespaced=False)
CONFIG_MAPS = _core("configmaps", "ConfigMap", namespaced=True)
EVENTS = _core("events", "Event", namespaced=True)
SERVICE_ACCOUNTS = _core("serviceaccounts", "ServiceAccount", namespaced=True)
SERVICES = _core("services", "Service", namespaced=True)
DEPLOYMENTS = Resource(group="apps", version="v1", plural="deployments", kind="Deployment",
                       namespaced=True)
REPLICA_SETS = Resource(group="apps", version="v1", plural="replicasets", kind="ReplicaSet",
                        namespaced=True)
CRON_JOBS = Resource(group="batch", version="v1", plural="cronjobs", kind="CronJob",
                     namespaced=True)
JOBS = Resource(group="batch", version="v1", plural="jobs", kind="Job", namespaced=True)
LEASES = Resource(group="coordination.k8s.io", version="v1", plural="leases", kind="Lease",
                  namespaced=True)
CUSTOM_RESOURCE_DEFINITIONS = Resource(
    group="apiextensions.k8s.io", version="v1", plural="customresourcedefinitions",
    kind="CustomResourceDefinition", namespaced=False)

HORIZONTAL_POD_AUTOSCALERS = Resource(group="autoscaling", version="v2",
                                      plural="horizontalpodautoscalers",
                                      kind="HorizontalPodAutoscaler", namespaced=True)
API_SERVICES = Resource(group="apiregistration.k8s.io", version="v1", plural="apiservices",
                        kind="APIService", namespaced=False)
# What metrics-server serves (through the aggregation layer) and HPAs read.
POD_METRICS = Resource(group="metrics.k8s.io", version="v1beta1", plural="pods",
                       kind="PodMetrics", namespaced=True)
ROLES = Resource(group="rbac.authorization.k8s.io", version="v1", plural="roles", kind="Role",
                 namespaced=True)
ROLE_BINDINGS = Resource(group="rbac.authorization.k8s.io", version="v1", plural="rolebindings",
                         kind="RoleBinding", namespaced=True)
# KWOK's usage emulation (its CRD ships with the KWOK build): usage for the pods it selects.
CLUSTER_RESOURCE_USAGES = Resource(group="kwok.x-k8s.io", version="v1alpha1",
                                   plural="clusterresourceusages",
                                   kind="ClusterResourceUsage", namespaced=False)
# Ours (deploy/crds/): the Simulation skctl creates and sk-ctrl runs, and the root object
# that owns everything the driver creates for one simulation.
SIMULATIONS = Resource(group="simkube.dev", version="v1alpha1", plural="simulations",
                       kind="Simulation", namespaced=False)
SIMULATION_ROOTS = Resource(group="simkube.dev", version="v1alpha1", plural="simulationroots",
                            kind="SimulationRoot", namespaced=False)

# Karpenter's, and its KWOK provider's node class.
NODE_CLAIMS = Resource(group="karpenter.sh", version="v1", plural="nodeclaims",
                       kind="NodeClaim", namespaced=False)
NODE_POOLS = Resource(group="karpenter.sh", version="v1", plural="nodepools", kind="NodePool",
                      namespaced=False)
KWOK_NODE_CLASSES = Resource(group="karpenter.kwok.sh", version="v1alpha1",
                             plural="kwoknodeclasses", kind="KWOKNodeClass", namespaced=False)
