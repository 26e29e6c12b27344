"""Installing the Simulation CRD: server-side apply when it is missing or an older revision.

sk-ctrl ships the CRD it was written against (``simulation-crd.yaml``, identical to
deploy/crds/simulation.yaml). The label ``simkube.dev/crd-revision`` numbers its revisions,
so a newer sk-ctrl upgrades an older CRD and an older sk-ctrl leaves a newer one alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from simkube.core.errors import EnvironmentStateError
from simkube.core.kubeapi import (
    APPLY_PATCH,
    CUSTOM_RESOURCE_DEFINITIONS,
    ApiError,
    KubeClient,
    poll,
)
from simkube.core.logs import get_logger
from simkube.ctrl.names import FIELD_MANAGER
from simkube.simulation.names import CRD_NAME

log = get_logger(__name__)
CRD_FILE = Path(__file__).resolve().parent / "simulation-crd.yaml"
REVISION_LABEL = "simkube.dev/crd-revision"
CRD_TIMEOUT = 60.0


def crd_manifest() -> dict[str, Any]:
    manifest: dict[str, Any] = yaml.safe_load(CRD_FILE.read_text())
    return manifest


def revision(crd: dict[str, Any]) -> int:
    value = crd.get("metadata", {}).get("labels", {}).get(REVISION_LABEL, "0")
    return int(value) if str(value).isdigit() else 0


def _established(crd: dict[str, Any]) -> bool:
    return any(c.get("type") == "Established" and c.get("status") == "True"
               for c in crd.get("status", {}).get("conditions") or [])


async def ensure_crd(kube: KubeClient, *, timeout: float = CRD_TIMEOUT) -> bool:
    """Apply the CRD when missing or older, then wait until Established; True if applied."""
    path = CUSTOM_RESOURCE_DEFINITIONS.path(name=CRD_NAME)
    manifest = crd_manifest()
    try:
        current: dict[str, Any] | None = await kube.request("GET", path)
    except ApiError as exc:
        if exc.code != 404:
            raise
        current = None
    applied = current is None or revision(current) < revision(manifest)
    if applied:
        await kube.request("PATCH", path, body=manifest, content_type=APPLY_PATCH,
                           query={"fieldManager": FIELD_MANAGER, "force": "true"})
        log.info("applied CRD", crd=CRD_NAME, revision=revision(manifest))

    async def established() -> bool:
        return _established(await kube.request("GET", path))
    if not await poll(established, timeout=timeout, interval=0.1):
        raise EnvironmentStateError(f"the {CRD_NAME} CRD was not Established within "
                                    f"{timeout:.0f}s")
    return applied
