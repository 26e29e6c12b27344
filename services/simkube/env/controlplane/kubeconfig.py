"""Kubeconfig files for the environment's users: one per identity, certificates embedded.

Embedding keeps each file self-contained, so users can copy it anywhere; we never write to
``~/.kube/config``.
"""

from __future__ import annotations

import base64
from pathlib import Path

import yaml

from simkube.env.controlplane.certs import Identity


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def write_kubeconfig(*, path: Path, server: str, pki: Path, identity: Identity,
                     context: str) -> Path:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": context, "cluster": {
            "server": server, "certificate-authority-data": _b64(pki / "ca.crt")}}],
        "users": [{"name": identity.user, "user": {
            "client-certificate-data": _b64(pki / f"{identity.file_stem}.crt"),
            "client-key-data": _b64(pki / f"{identity.file_stem}.key")}}],
        "contexts": [{"name": context,
                      "context": {"cluster": context, "user": identity.user}}],
        "current-context": context,
    }
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    path.chmod(0o600)
    return path
