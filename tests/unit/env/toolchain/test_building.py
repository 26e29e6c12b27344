from __future__ import annotations

from pathlib import Path

import pytest

from simkube.core.errors import BuildError
from simkube.env.toolchain.building import classify_failure, go_binary, go_output_name
from simkube.env.toolchain.catalog import CLUSTER_AUTOSCALER, KUBERNETES

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
