from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from simkube.core.errors import BuildError
from simkube.env.toolchain.building import (
    _copy_assets,
    classify_failure,
    go_binary,
    go_output_name,
)
from simkube.env.toolchain.catalog import CLUSTER_AUTOSCALER, HELM, KUBERNETES

pytestmark = pytest.mark.unit
LOG = Path("/tmp/build.log")


def test_missing_go_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GO", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(BuildError, match="Go is not installed or not on PATH"):
        go_binary()


def test_old_go_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = tmp_path / "go"
    fake.write_text("#!/bin/sh\necho go version go1.21.0 linux/amd64\n")
    fake.chmod(0o755)
    monkeypatch.setenv("GO", str(fake))
    with pytest.raises(BuildError, match=r"Go 1.26 or newer is needed; found: go version go1.21"):
        go_binary()


def test_unreachable_proxy_is_named() -> None:
    error = classify_failure(KUBERNETES, "Get https://proxy.golang.org/...: dial tcp: lookup "
                             "proxy.golang.org: no such host", LOG)
    assert "Go module proxy is unreachable" in str(error)


def test_refusing_proxy_names_the_module() -> None:
    error = classify_failure(KUBERNETES, "reading https://proxy/...: 403 Forbidden", LOG)
    assert "refused a module needed for kubernetes" in str(error)
    assert "k8s.io/kubernetes/cmd/kube-apiserver" in str(error)


def test_a_refused_autoscaler_names_the_other_ways_to_get_one() -> None:
    error = classify_failure(CLUSTER_AUTOSCALER, "reading https://proxy/...: 403 Forbidden",
                             LOG)
    assert "the Go module proxy refuses k8s.io/autoscaler/cluster-autoscaler" in str(error)
    assert "--autoscaler-binary PATH" in str(error.hint)
    assert "SIMKUBE_CLUSTER_AUTOSCALER" in str(error.hint)


def test_other_failures_show_the_log_tail() -> None:
    error = classify_failure(KUBERNETES, "line1\nundefined: foo\n", LOG)
    assert "undefined: foo" in str(error)
    assert str(LOG) in str(error)


@pytest.mark.parametrize(("package", "name"), [
    ("k8s.io/kubernetes/cmd/kube-apiserver", "kube-apiserver"),
    ("go.etcd.io/etcd/server/v3", "server"),
    ("sigs.k8s.io/kwok/cmd/kwok", "kwok"),
])
def test_go_output_names(package: str, name: str) -> None:
    assert go_output_name(package) == name


def _fake_go(tmp_path: Path, output: str, code: int = 0) -> str:
    fake = tmp_path / "go"
    fake.write_text(f"#!/bin/sh\ncat <<'EOF'\n{output}\nEOF\nexit {code}\n")
    fake.chmod(0o755)
    return str(fake)


def test_assets_come_from_the_module_go_mod_download_names(tmp_path: Path) -> None:
    """A module the build never needed (helm's cert-manager) is fetched, not just listed."""
    module = tmp_path / "mod"
    (module / "deploy/crds").mkdir(parents=True)
    (module / "deploy/crds/cert-manager.io_issuers.yaml").write_text("kind: X\n")
    staging = tmp_path / "staging"
    staging.mkdir()
    group = replace(HELM, assets=(("github.com/cert-manager/cert-manager",
                                   "deploy/crds/cert-manager.io_issuers.yaml"),))
    go = _fake_go(tmp_path, json.dumps({"Path": "github.com/cert-manager/cert-manager",
                                        "Dir": str(module)}))
    _copy_assets(go, group, tmp_path, staging, {})
    assert (staging / "assets/cert-manager.io_issuers.yaml").read_text() == "kind: X\n"


def test_an_unavailable_asset_module_is_named(tmp_path: Path) -> None:
    staging = tmp_path / "staging"
    staging.mkdir()
    go = _fake_go(tmp_path, '{"Path": "x.io/m", "Error": "not a known dependency"}', code=1)
    with pytest.raises(BuildError, match=r"cannot find github\.com/cert-manager/cert-manager"):
        _copy_assets(go, HELM, tmp_path, staging, {})
