from __future__ import annotations

import pytest

from simkube.core.kubeapi import (
    CONFIG_MAPS,
    CRON_JOBS,
    CUSTOM_RESOURCE_DEFINITIONS,
    DEPLOYMENTS,
    EVENTS,
    KWOK_NODE_CLASSES,
    LEASES,
    NAMESPACES,
    NODE_CLAIMS,
    NODE_POOLS,
    NODES,
    PODS,
    SERVICE_ACCOUNTS,
    SIMULATION_ROOTS,
    SIMULATIONS,
    GroupVersionKind,
    Resource,
    group_version_path,
)

pytestmark = pytest.mark.unit


def test_group_version_paths() -> None:
    assert group_version_path("v1") == "/api/v1"
    assert group_version_path("apps/v1") == "/apis/apps/v1"
    assert group_version_path("karpenter.kwok.sh/v1alpha1") == "/apis/karpenter.kwok.sh/v1alpha1"


def test_namespaced_paths() -> None:
    assert PODS.path() == "/api/v1/pods"
    assert PODS.path(namespace="a") == "/api/v1/namespaces/a/pods"
    assert PODS.path(namespace="a", name="p") == "/api/v1/namespaces/a/pods/p"
    assert PODS.path(namespace="a", name="p", subresource="binding") == (
        "/api/v1/namespaces/a/pods/p/binding")
    assert DEPLOYMENTS.path(namespace="a", name="d") == "/apis/apps/v1/namespaces/a/deployments/d"
    assert LEASES.path(namespace="s") == "/apis/coordination.k8s.io/v1/namespaces/s/leases"
    assert CONFIG_MAPS.path(namespace="s", name="c") == "/api/v1/namespaces/s/configmaps/c"
    assert EVENTS.path() == "/api/v1/events"
    assert SERVICE_ACCOUNTS.path(namespace="default", name="default") == (
        "/api/v1/namespaces/default/serviceaccounts/default")
    assert CRON_JOBS.path(namespace="a", name="c") == "/apis/batch/v1/namespaces/a/cronjobs/c"


def test_cluster_scoped_paths_ignore_a_namespace() -> None:
    assert NODES.path() == "/api/v1/nodes"
    assert NODES.path(namespace="ignored", name="n") == "/api/v1/nodes/n"
    assert NAMESPACES.path(name="x") == "/api/v1/namespaces/x"
    assert SIMULATIONS.path(name="s", subresource="status") == (
        "/apis/simkube.dev/v1alpha1/simulations/s/status")
    assert SIMULATION_ROOTS.path() == "/apis/simkube.dev/v1alpha1/simulationroots"
    assert CUSTOM_RESOURCE_DEFINITIONS.path(name=SIMULATIONS.crd_name) == (
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/simulations.simkube.dev")
    assert NODE_CLAIMS.path() == "/apis/karpenter.sh/v1/nodeclaims"
    assert NODE_POOLS.path(name="p") == "/apis/karpenter.sh/v1/nodepools/p"
    assert KWOK_NODE_CLASSES.path(name="c") == (
        "/apis/karpenter.kwok.sh/v1alpha1/kwoknodeclasses/c")


def test_api_versions_and_kinds() -> None:
    assert (PODS.api_version, PODS.kind) == ("v1", "Pod")
    assert (SIMULATIONS.api_version, SIMULATIONS.kind) == ("simkube.dev/v1alpha1", "Simulation")
    assert SIMULATION_ROOTS.crd_name == "simulationroots.simkube.dev"
    assert isinstance(PODS, GroupVersionKind)
    assert GroupVersionKind(group="apps", version="v1", kind="Deployment").api_version == "apps/v1"
    widget = Resource(group="example.com", version="v1", plural="widgets", kind="Widget",
                      namespaced=True)
    assert widget.path(namespace="n", name="w") == "/apis/example.com/v1/namespaces/n/widgets/w"


def test_a_subresource_needs_a_name() -> None:
    with pytest.raises(ValueError, match="needs an object name"):
        PODS.path(namespace="a", subresource="status")
