"""Fixtures of the deploy tests: the rendered overlays, namespaces for a dry run, and
kubeconfigs that act as one of the overlays' ServiceAccounts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from simkube.env.toolchain.cache import binary_path
from simkube.env.toolchain.catalog import Binary
from tests.conftest import SimEnv
from tests.integration.deploy.manifests import (
    DEPLOY,
    FIELD_MANAGER,
    NAMESPACE,
    OVERLAYS,
    bundle,
    find,
    run,
)


@pytest.fixture(scope="module")
def kubectl() -> Path:
    return binary_path(Binary.KUBECTL)


@pytest.fixture(scope="module")
def rendered(kubectl: Path) -> dict[str, list[dict[str, Any]]]:
    return {overlay: [doc for doc in yaml.safe_load_all(
                run(kubectl, "kustomize", DEPLOY / "overlays" / overlay)) if doc]
            for overlay in OVERLAYS}


@pytest.fixture(scope="module")
def namespaces_for_dry_run(kubectl: Path, sim_env: SimEnv,
                           rendered: dict[str, list[dict[str, Any]]]) -> Iterator[None]:
    """Create the overlays' namespaces for real, for the length of the module.

    A dry run creates nothing, and the API server refuses objects in a namespace that does
    not exist (NamespaceLifecycle admission), so a bundle holding its own Namespace cannot be
    dry-run on its own. Only the namespaces this module created are removed afterwards."""
    wanted = {o["metadata"]["name"] for objects in rendered.values() for o in objects
              if o["kind"] == "Namespace"}
    existing = set(run(kubectl, "--kubeconfig", sim_env.kubeconfig, "get", "namespaces",
                       "-o", "name").split())
    created = sorted(n for n in wanted if f"namespace/{n}" not in existing)
    if created:
        run(kubectl, "--kubeconfig", sim_env.kubeconfig, "apply", "--server-side",
            f"--field-manager={FIELD_MANAGER}", "-f", "-",
            stdin=bundle([{"apiVersion": "v1", "kind": "Namespace",
                           "metadata": {"name": n}} for n in created]))
    try:
        yield
    finally:
        if created:
            run(kubectl, "--kubeconfig", sim_env.kubeconfig, "delete", "namespace", *created,
                "--wait=true", "--timeout=60s")


@pytest.fixture
def account_kubeconfig(kubectl: Path, sim_env: SimEnv, namespaces_for_dry_run: None,
                       rendered: dict[str, list[dict[str, Any]]],
                       tmp_path: Path) -> Iterator[Callable[[str, str], Path]]:
    """Kubeconfigs that authenticate as one of the overlays' ServiceAccounts.

    The account and the roles bound to it are created for real (and deleted after), and a
    token is requested for it, so a service runs with exactly the rights its manifest
    grants: too little shows as a 403 from the API server."""
    admin = ("--kubeconfig", sim_env.kubeconfig)
    created: list[str] = []

    def make(overlay: str, account: str) -> Path:
        objects = rendered[overlay]
        bindings = [o for o in objects if o["kind"] in ("RoleBinding", "ClusterRoleBinding")
                    and any(s["name"] == account for s in o["subjects"])]
        refs = {(b["roleRef"]["kind"], b["metadata"].get("namespace")
                 if b["roleRef"]["kind"] == "Role" else None, b["roleRef"]["name"])
                for b in bindings}
        rbac = bundle([find(objects, "ServiceAccount", account, NAMESPACE), *(
            o for o in objects if o["kind"] in ("Role", "ClusterRole")
            and (o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) in refs),
            *bindings])
        run(kubectl, *admin, "apply", "--server-side", f"--field-manager={FIELD_MANAGER}",
            "-f", "-", stdin=rbac)
        created.append(rbac)
        token = run(kubectl, *admin, "create", "token", account, "-n", NAMESPACE,
                    "--duration=10m").strip()
        config = yaml.safe_load(Path(sim_env.kubeconfig).read_text())
        config["users"] = [{"name": account, "user": {"token": token}}]
        for context in config["contexts"]:
            context["context"]["user"] = account
        path = tmp_path / f"{account}.kubeconfig"
        path.write_text(yaml.safe_dump(config))
        return path
    try:
        yield make
    finally:
        for rbac in created:
            run(kubectl, *admin, "delete", "--ignore-not-found", "-f", "-", stdin=rbac)


