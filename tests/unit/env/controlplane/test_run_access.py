"""The scheduler may read the run's ConfigMap, and that one object only."""

from __future__ import annotations

import pytest

from simkube.env.controlplane import run_access

pytestmark = pytest.mark.unit


def test_the_role_names_the_one_configmap_and_binds_the_scheduler() -> None:
    (role_path, role), (binding_path, binding) = run_access.manifests("sk-cloudprov/run-cm")
    assert role_path.endswith("/namespaces/sk-cloudprov/roles/simkube-run-clock-reader")
    assert binding_path.endswith("/namespaces/sk-cloudprov/rolebindings/simkube-run-clock-reader")
    assert role["rules"] == [{"apiGroups": [""], "resources": ["configmaps"],
                              "resourceNames": ["run-cm"], "verbs": ["get", "list", "watch"]}]
    assert binding["subjects"][0]["name"] == "system:kube-scheduler"
    assert binding["roleRef"]["name"] == role["metadata"]["name"]


@pytest.mark.parametrize("bad", ["", "name-only", "/name", "ns/", "a/b/c"])
def test_a_run_configmap_that_is_not_namespace_slash_name_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="is not namespace/name"):
        run_access.manifests(bad)
