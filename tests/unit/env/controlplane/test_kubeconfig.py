from __future__ import annotations

import base64
from pathlib import Path

import pytest
import yaml

from simkube.env.controlplane.certs import SCHEDULER, generate_pki
from simkube.env.controlplane.kubeconfig import write_kubeconfig

pytestmark = pytest.mark.unit


def test_self_contained_kubeconfig(tmp_path: Path) -> None:
    generate_pki(tmp_path)
    path = write_kubeconfig(path=tmp_path / "k", server="https://127.0.0.1:6443", pki=tmp_path,
                            identity=SCHEDULER, context="simkube-dev")
    config = yaml.safe_load(path.read_text())
    assert config["current-context"] == "simkube-dev"
    assert config["clusters"][0]["cluster"]["server"] == "https://127.0.0.1:6443"
    user = config["users"][0]
    assert user["name"] == "system:kube-scheduler"
    embedded = base64.b64decode(user["user"]["client-certificate-data"])
    assert embedded == (tmp_path / "scheduler.crt").read_bytes()
    assert path.stat().st_mode & 0o777 == 0o600
