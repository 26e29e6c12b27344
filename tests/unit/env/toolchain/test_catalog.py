from __future__ import annotations

from pathlib import Path

import pytest

from simkube.env.toolchain import catalog
from simkube.env.toolchain.catalog import (
    ALL_GROUPS,
    CLOUDPROV_FRONT,
    CLUSTER_AUTOSCALER,
    CONTROL_PLANE,
    CORE_GROUPS,
    ETCD,
    HELM,
    KARPENTER,
    KUBE_SCHEDULER,
    KUBERNETES,
    Binary,
    group_of,
)

pytestmark = pytest.mark.unit


def test_every_binary_belongs_to_exactly_one_group() -> None:
    for binary in Binary:
        assert sum(binary in g.packages for g in ALL_GROUPS) == 1
        assert binary in group_of(binary).packages


def test_core_groups_have_pinned_modules() -> None:
    for group in CORE_GROUPS:
        assert (group.module_dir / "go.mod").is_file()
        assert (group.module_dir / "go.sum").is_file()
    assert CLUSTER_AUTOSCALER.optional
    assert CLUSTER_AUTOSCALER not in CORE_GROUPS


def test_cache_key_changes_with_the_pins() -> None:
    assert ETCD.cache_key.startswith("etcd-v3.6.14-")
    assert ETCD.fingerprint != KUBERNETES.fingerprint
    assert "-X k8s.io/component-base/version.gitVersion=v1.36.3" in KUBERNETES.ldflags


def test_kubernetes_staging_modules_are_pinned_to_published_releases() -> None:
    go_mod = (KUBERNETES.module_dir / "go.mod").read_text()
    assert "\tk8s.io/kubernetes v1.36.3 " in go_mod
    assert go_mod.count("=> k8s.io/") == 32
    assert "k8s.io/api => k8s.io/api v0.36.3" in go_mod


def test_karpenter_builds_the_wrappers_own_main() -> None:
    assert KARPENTER.packages[Binary.KARPENTER] == "simkube.local/toolchain/karpenter"
    assert "module simkube.local/toolchain/karpenter" in (
        KARPENTER.module_dir / "go.mod").read_text()
    assert [p.name for p in KARPENTER.sources] == [
        "main.go", "naming.go", "paced.go", "passes.go", "queue.go", "registration.go",
        "retimed.go", "termination.go", "triggers.go",
        # the shared clocks it replaces in (../pacing)
        "go.mod", "clock.go", "doc.go", "holdwatch.go", "pace.go", "traceclock.go"]
    assert all(not group.sources for group in (ETCD, KUBERNETES))


def test_the_scheduler_is_upstreams_command_on_the_shared_clock() -> None:
    assert Binary.KUBE_SCHEDULER not in KUBERNETES.packages
    assert group_of(Binary.KUBE_SCHEDULER) is KUBE_SCHEDULER
    assert KUBE_SCHEDULER in CONTROL_PLANE
    go_mod = (KUBE_SCHEDULER.module_dir / "go.mod").read_text()
    assert "\tk8s.io/kubernetes v1.36.3" in go_mod
    assert "replace simkube.local/toolchain/pacing => ../pacing" in go_mod
    assert KUBE_SCHEDULER.ldflags == KUBERNETES.ldflags
    assert [p.name for p in KUBE_SCHEDULER.sources][:2] == ["command.go", "main.go"]


def test_a_shared_modules_source_is_part_of_its_users_cache_keys(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catalog, "TOOLCHAIN_DIR", tmp_path)
    for name in ("user", "shared"):
        (tmp_path / name).mkdir()
    (tmp_path / "shared" / "go.mod").write_text("module shared\n")
    group = catalog.BuildGroup(name="user", version="v1", packages={Binary.KWOK: "example/x"},
                               shared=("shared",))
    bare = group.fingerprint
    (tmp_path / "shared" / "clock_test.go").write_text("package shared\n")
    assert group.fingerprint == bare
    (tmp_path / "shared" / "clock.go").write_text("package shared\n")
    assert group.fingerprint != bare


def test_the_wrappers_go_source_is_part_of_the_cache_key(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catalog, "TOOLCHAIN_DIR", tmp_path)
    (tmp_path / "g").mkdir()
    group = catalog.BuildGroup(name="g", version="v1", packages={Binary.KWOK: "example/x"})
    bare = group.fingerprint
    (tmp_path / "g" / "main_test.go").write_text("package main\n")
    assert group.fingerprint == bare  # tests are not in the binary
    (tmp_path / "g" / "main.go").write_text("package main\n")
    with_main = group.fingerprint
    assert with_main != bare
    (tmp_path / "g" / "main.go").write_text("package main\n\nfunc main() {}\n")
    assert group.fingerprint != with_main


def test_helm_is_pinned_and_stamped_as_its_makefile_does() -> None:
    go_mod = (HELM.module_dir / "go.mod").read_text()
    assert HELM in CORE_GROUPS  # make test's `skctl env build` builds it
    assert "\thelm.sh/helm/v3 v3.22.0 " in go_mod
    assert HELM.packages[Binary.HELM] == "helm.sh/helm/v3/cmd/helm"
    assert "-X helm.sh/helm/v3/internal/version.version=v3.22.0" in HELM.ldflags
    # The Kubernetes version helm assumes comes from its client-go: v0.37.x -> 1.37.
    assert "\tk8s.io/client-go v0.37." in go_mod
    assert "-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=37" in HELM.ldflags
    assert "-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=37" in HELM.ldflags
    # cert-manager's module is pinned only for the CRDs the chart's TLS option needs.
    assert "\tgithub.com/cert-manager/cert-manager v1.19.4 " in go_mod
    assert {module for module, _ in HELM.assets} == {"github.com/cert-manager/cert-manager"}


def test_the_cloudprov_front_is_built_from_its_own_sources() -> None:
    # The project's own Go module: its sources, not only its pins, decide the cache entry.
    assert CLOUDPROV_FRONT in CORE_GROUPS
    assert {path.name for path in CLOUDPROV_FRONT.sources} >= {"main.go", "front.go", "policy.go"}
    assert not any(path.name.endswith("_test.go") for path in CLOUDPROV_FRONT.sources)
