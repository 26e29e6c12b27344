from __future__ import annotations

import pytest

from simkube.env.toolchain.catalog import (
    ALL_GROUPS,
    CLUSTER_AUTOSCALER,
    CORE_GROUPS,
    ETCD,
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
