from __future__ import annotations

from pathlib import Path

import pytest

from simkube.env.toolchain.stamps import helm_stamps, kubernetes_stamps

pytestmark = pytest.mark.unit


def test_kubernetes_stamps_both_version_packages() -> None:
    flags = kubernetes_stamps("v1.36.3")
    assert "-X k8s.io/component-base/version.gitMinor=36" in flags
    assert "-X k8s.io/client-go/pkg/version.gitVersion=v1.36.3" in flags


def test_helm_assumes_the_kubernetes_of_its_client_go(tmp_path: Path) -> None:
    go_mod = tmp_path / "go.mod"
    go_mod.write_text("module x\n\nrequire (\n\tk8s.io/client-go v0.35.2 // indirect\n)\n")
    flags = helm_stamps("v3.22.0", go_mod=go_mod)
    assert "-X helm.sh/helm/v3/internal/version.version=v3.22.0" in flags
    assert "-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=35" in flags
    assert "-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1" in flags
