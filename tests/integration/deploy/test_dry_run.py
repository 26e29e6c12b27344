"""Every object of both overlays passes ``kubectl apply --server-side --dry-run=server``
(schema, defaulting, admission, RBAC escalation checks) and is namespaced and labelled.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SimEnv
from tests.integration.deploy.manifests import (
    CLUSTER_SCOPED,
    OVERLAYS,
    PART_OF,
    server_side_dry_run,
)

pytestmark = pytest.mark.integration


@pytest.mark.usefixtures("namespaces_for_dry_run")
@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_object_passes_a_server_side_dry_run(
        overlay: str, kubectl: Path, sim_env: SimEnv,
        rendered: dict[str, list[dict[str, Any]]]) -> None:
    objects = rendered[overlay]
    # The bundle holds no custom resources (KWOK's stages travel in a ConfigMap), so nothing
    # depends on a CRD the dry run does not really create.
    served = {"v1", "apps/v1", "rbac.authorization.k8s.io/v1", "networking.k8s.io/v1",
              "apiextensions.k8s.io/v1"}
    assert {o["apiVersion"] for o in objects} <= served
    server_side_dry_run(kubectl, sim_env.kubeconfig, objects)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_objects_are_namespaced_and_labelled(
        overlay: str, rendered: dict[str, list[dict[str, Any]]]) -> None:
    for o in rendered[overlay]:
        meta = o["metadata"]
        where = f"{o['kind']} {meta['name']}"
        # No namespace transformer: a namespaced object without one would land in whatever
        # namespace the user's kubeconfig defaults to.
        assert (o["kind"] in CLUSTER_SCOPED) == ("namespace" not in meta), where
        assert meta.get("labels", {}).get(PART_OF[0]) == PART_OF[1], where
