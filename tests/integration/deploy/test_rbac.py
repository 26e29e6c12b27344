"""Least-privilege RBAC: accounts and bindings that exist, no wildcards, a read-only tracer.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.deploy.manifests import (
    OVERLAYS,
    granted,
)

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_deployments_use_existing_service_accounts_and_bindings(
        overlay: str, rendered: dict[str, list[dict[str, Any]]]) -> None:
    objects = rendered[overlay]
    accounts = {(o["metadata"]["namespace"], o["metadata"]["name"])
                for o in objects if o["kind"] == "ServiceAccount"}
    for deployment in (o for o in objects if o["kind"] == "Deployment"):
        spec = deployment["spec"]["template"]["spec"]
        assert (deployment["metadata"]["namespace"], spec["serviceAccountName"]) in accounts
        assert deployment["spec"]["replicas"] == 1
    roles = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"])
             for o in objects if o["kind"] in ("Role", "ClusterRole")}
    for binding in (o for o in objects if o["kind"] in ("RoleBinding", "ClusterRoleBinding")):
        ref = binding["roleRef"]
        namespace = binding["metadata"].get("namespace") if ref["kind"] == "Role" else None
        assert (ref["kind"], namespace, ref["name"]) in roles, binding["metadata"]["name"]
        for subject in binding["subjects"]:
            assert subject["kind"] == "ServiceAccount"
            assert (subject["namespace"], subject["name"]) in accounts


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_rbac_has_no_wildcards(overlay: str, rendered: dict[str, list[dict[str, Any]]]) -> None:
    for role in (o for o in rendered[overlay] if o["kind"] in ("Role", "ClusterRole")):
        for rule in role["rules"]:
            for field in ("verbs", "resources", "apiGroups"):
                assert "*" not in rule.get(field, []), (role["metadata"]["name"], rule)
            assert "nonResourceURLs" not in rule
            # resourceNames cannot restrict create or deletecollection; a rule that pretends to
            # would silently grant nothing. (A list or watch it restricts is granted only with
            # a metadata.name field selector, which is how sk-cloudprov watches its run
            # ConfigMap: cloudprov/current_run.py.)
            if rule.get("resourceNames"):
                assert not {"create", "deletecollection"} & set(rule["verbs"]), rule




def test_tracer_is_read_only(rendered: dict[str, list[dict[str, Any]]]) -> None:
    allowed = granted(rendered["prod"], "sk-tracer")
    assert allowed
    assert set().union(*allowed.values()) <= {"get", "list", "watch"}
    assert not any("/" in resource for _, resource in allowed)  # no subresources either


def test_prod_overlay_holds_only_the_tracer(rendered: dict[str, list[dict[str, Any]]]) -> None:
    assert [d["metadata"]["name"] for d in rendered["prod"]
            if d["kind"] == "Deployment"] == ["sk-tracer"]
