"""Reading ``go build -v`` output for the build display, and the order groups are built in."""

from __future__ import annotations

import pytest

from simkube.env.toolchain.catalog import plan_builds
from simkube.env.toolchain.progress import BuildProgress, LineKind, Phase, classify, shorten

pytestmark = pytest.mark.unit

# Lines as Go prints them (from a real Kubernetes build log), and what each is.
LINES = [
    ("go: downloading k8s.io/kubernetes v1.36.3", LineKind.DOWNLOAD, "k8s.io/kubernetes v1.36.3"),
    ("go: downloading github.com/coreos/go-systemd/v22 v22.5.0", LineKind.DOWNLOAD,
     "github.com/coreos/go-systemd/v22 v22.5.0"),
    ("k8s.io/kubectl/pkg/cmd/version", LineKind.PACKAGE, "k8s.io/kubectl/pkg/cmd/version"),
    ("runtime/internal/sys", LineKind.PACKAGE, "runtime/internal/sys"),
    ("gopkg.in/yaml.v3\n", LineKind.PACKAGE, "gopkg.in/yaml.v3"),
    ("# k8s.io/kubernetes/cmd/kubectl", LineKind.OTHER, "# k8s.io/kubernetes/cmd/kubectl"),
    ("main.go:12:3: undefined: x", LineKind.OTHER, "main.go:12:3: undefined: x"),
    ("go: k8s.io/api@v0.36.3: missing go.sum entry", LineKind.OTHER,
     "go: k8s.io/api@v0.36.3: missing go.sum entry"),
]


@pytest.mark.parametrize(("line", "kind", "name"), LINES)
def test_each_line_is_classified(line: str, kind: LineKind, name: str) -> None:
    assert classify(line) == (kind, name)


def test_progress_follows_downloads_then_packages() -> None:
    progress = BuildProgress(group="[3/4] kubernetes v1.36.3")
    assert progress.phase is Phase.STARTING
    assert progress.describe() == "[3/4] kubernetes v1.36.3: resolving modules"
    progress.feed("go: downloading k8s.io/api v0.36.3")
    progress.feed("go: downloading k8s.io/apimachinery v0.36.3")
    assert progress.describe() == ("[3/4] kubernetes v1.36.3: downloading modules (2), "
                                   "now k8s.io/apimachinery v0.36.3")
    progress.feed("k8s.io/apimachinery/pkg/types")
    progress.feed("# some header Go prints before an error")
    assert progress.describe() == ("[3/4] kubernetes v1.36.3: compiled 1 package, "
                                   "now k8s.io/apimachinery/pkg/types")
    long = "k8s.io/kubernetes/pkg/kubelet/cm/devicemanager/plugin/v1beta1/stub/extra/deeper"
    progress.feed(long)
    assert progress.compiled == 2
    assert progress.describe().endswith(f"packages, now …{long[-59:]}")
    assert progress.downloaded == 2


def test_long_paths_keep_their_end() -> None:
    assert shorten("a/b", width=10) == "a/b"
    assert shorten("k8s.io/kubernetes/pkg/scheduler", width=12) == "…g/scheduler"


def test_builds_run_what_every_environment_needs_first() -> None:
    assert [g.name for g in plan_builds()] == [
        "etcd", "kwok", "kubernetes", "kube-scheduler", "metrics-server", "cloudprov-front",
        "karpenter", "helm"]
    assert [g.name for g in plan_builds(autoscaler=True)][-1] == "cluster-autoscaler"
    # 'make demo' names what it runs; the order is the build order, not the order named.
    assert [g.name for g in plan_builds(only=("karpenter", "etcd"))] == ["etcd", "karpenter"]
    with pytest.raises(ValueError, match="no build group named nope"):
        plan_builds(only=("nope",))
