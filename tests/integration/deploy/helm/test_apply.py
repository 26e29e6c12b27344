"""Every documented values file's rendering is accepted by the local control plane.

The CRDs go in for real, as ``helm install`` puts crds/ in before the templates: the chart's
own (which must be the ones the code installs, see tests/unit/deploy/test_helm_chart.py) and
the third-party ones an example's custom resources need (cert-manager's, kept by
``skctl env build`` beside helm; Karpenter's, beside its binary). Everything else is applied
server-side with ``--dry-run=server``: schema, defaulting, admission and RBAC escalation
checks run, nothing is kept, and the services' Deployments never start. CRDs this module
created are deleted afterwards, those the cluster had are left alone.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from simkube.env.toolchain.cache import asset_paths
from simkube.env.toolchain.catalog import HELM, KARPENTER
from tests.conftest import SimEnv
from tests.integration.deploy.helm.chart import EXAMPLES, Helm
from tests.integration.deploy.manifests import (
    FIELD_MANAGER,
    bundle,
    run,
    server_side_dry_run,
)

pytestmark = pytest.mark.integration

# How long the CRDs this module created may take to go (see _wait_deleted).
CRD_DELETION_S = 300

# The API groups whose CRDs come from outside the chart, and where they are kept.
THIRD_PARTY = {"cert-manager.io": lambda: asset_paths(HELM),
               "karpenter.sh": lambda: asset_paths(KARPENTER),
               "karpenter.kwok.sh": lambda: asset_paths(KARPENTER)}


@pytest.fixture(scope="module")
def crds(kubectl: Path, sim_env: SimEnv) -> Iterator[Any]:
    """Apply CRDs for real (once per name), waiting until they are established."""
    admin = ("--kubeconfig", sim_env.kubeconfig)
    existing = set(run(kubectl, *admin, "get", "crd", "-o", "name").split())
    applied: set[str] = set()

    def install(objects: list[dict[str, Any]]) -> None:
        names = [o["metadata"]["name"] for o in objects
                 if o["metadata"]["name"] not in applied]
        if not names:
            return
        run(kubectl, *admin, "apply", "--server-side", "--force-conflicts",
            f"--field-manager={FIELD_MANAGER}", "-f", "-",
            stdin=bundle([o for o in objects if o["metadata"]["name"] in names]))
        run(kubectl, *admin, "wait", "--for=condition=Established", "--timeout=60s",
            *(f"crd/{name}" for name in names))
        applied.update(names)
    try:
        yield install
    finally:
        created = sorted(f"crd/{n}" for n in applied
                         if f"customresourcedefinition.apiextensions.k8s.io/{n}" not in existing)
        if created:
            run(kubectl, *admin, "delete", "--ignore-not-found", "--wait=false", *created)
            _wait_deleted(kubectl, admin, created)


def _wait_deleted(kubectl: Path, admin: tuple[str, ...], names: list[str]) -> None:
    """Wait for the API server's CRD finalizer to let ``names`` go.

    Locally that takes seconds; once in CI it took longer than two minutes with no instances
    to delete. Left Terminating, a CRD would break a later test that installs it, so this
    waits longer and, if it still fails, says what each CRD's conditions were.
    """
    waited = subprocess.run(
        [str(kubectl), *admin, "wait", "--for=delete", f"--timeout={CRD_DELETION_S}s", *names],
        capture_output=True, text=True, timeout=CRD_DELETION_S + 30, check=False)
    if waited.returncode == 0:
        return
    conditions = subprocess.run(
        [str(kubectl), *admin, "get", "--ignore-not-found", *names, "-o",
         "jsonpath={range .items[*]}{.metadata.name}: {.status.conditions}{\"\\n\"}{end}"],
        capture_output=True, text=True, timeout=60, check=False)
    pytest.fail(f"CRDs still there {CRD_DELETION_S} s after their deletion:\n"
                f"{conditions.stdout}{conditions.stderr}{waited.stderr}")


def _third_party_crds(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    groups = {o["apiVersion"].split("/")[0] for o in objects} & THIRD_PARTY.keys()
    paths = dict.fromkeys(path for group in sorted(groups) for path in THIRD_PARTY[group]())
    return [doc for path in paths for doc in yaml.safe_load_all(path.read_text()) if doc]


@pytest.mark.usefixtures("namespaces_for_dry_run")
@pytest.mark.parametrize("values", EXAMPLES, ids=lambda p: p.name)
def test_the_api_server_accepts_every_object(
        values: Path, helm: Helm, kubectl: Path, sim_env: SimEnv, crds: Any) -> None:
    objects = helm.template(values)
    definitions = [o for o in objects if o["kind"] == "CustomResourceDefinition"]
    assert {o["metadata"]["name"] for o in definitions} == {
        "simulations.simkube.dev", "simulationroots.simkube.dev"}
    crds(definitions + _third_party_crds(objects))
    rest = [o for o in objects if o["kind"] != "CustomResourceDefinition"]
    server_side_dry_run(kubectl, sim_env.kubeconfig, rest)
