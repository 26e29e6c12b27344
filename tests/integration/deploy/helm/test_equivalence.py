"""The chart and the kustomize overlays render the same objects for the same settings:
examples/sim.yaml against deploy/overlays/sim, examples/prod.yaml against
deploy/overlays/prod. Differences on purpose are taken out by ``chart.normalized`` (Helm's
labels, checksum annotations against hashed ConfigMap names, ConfigMap file formatting), and
the overlays' Namespace simkube-system is not the chart's: Helm's release namespace is made
by ``helm install --create-namespace``, as is the custom.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.deploy.helm.chart import CHART, Helm, key, normalized
from tests.integration.deploy.manifests import NAMESPACE

pytestmark = pytest.mark.integration

# Overlay -> (values file, whether its CRDs are part of it, its generated ConfigMaps).
PAIRS = {"sim": ("sim.yaml", True, frozenset({"kwok-config",
                                               "cluster-autoscaler-cloud-config"})),
         "prod": ("prod.yaml", False, frozenset({"sk-tracer-config"}))}


@pytest.mark.parametrize("overlay", sorted(PAIRS))
def test_chart_renders_the_overlays_objects(
        overlay: str, helm: Helm, rendered: dict[str, list[dict[str, Any]]]) -> None:
    values, with_crds, generated = PAIRS[overlay]
    release_namespace = ("v1", "Namespace", "", NAMESPACE)
    ours = {key(o): o for o in (normalized(o, generated) for o in helm.template(
        CHART / "examples" / values, include_crds=with_crds))}
    theirs = {key(o): o for o in (normalized(o, generated) for o in rendered[overlay])
              if key(o) != release_namespace}
    assert sorted(ours.keys() - theirs.keys()) == [], "only in the chart"
    assert sorted(theirs.keys() - ours.keys()) == [], "only in the overlay"
    for k, theirs_object in theirs.items():
        assert ours[k] == theirs_object, k


def test_namespaces_and_addresses_follow_the_release(helm: Helm) -> None:
    """The overlays' fixed simkube-system is the chart's release namespace: every namespaced
    object but the two Roles that must live elsewhere moves with it, and so does every
    in-cluster address and ConfigMap reference in an argument."""
    objects = helm.template(CHART / "examples" / "sim.yaml", include_crds=False,
                            namespace="sim", sets=("cloudprov.groupNamespace=groups",))
    assert {o["metadata"].get("namespace") for o in objects} == {"sim", "default", "groups",
                                                                 None}
    args = " ".join(arg for o in objects if o["kind"] == "Deployment"
                    for c in o["spec"]["template"]["spec"]["containers"]
                    for arg in c.get("args", []))
    assert NAMESPACE not in args
    assert "--driver=sk-driver.sim.svc:50052" in args
    assert "--config=configmap:sim/sk-node-groups" in args
    config = next(o for o in objects if o["metadata"]["name"] == "sk-node-groups")
    assert "namespace: groups" in config["data"]["config.yaml"]
