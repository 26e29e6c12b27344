from __future__ import annotations

import json
from pathlib import Path

import pytest

from simkube.core.errors import EnvironmentStateError
from simkube.env.toolchain import cache
from simkube.env.toolchain.catalog import KARPENTER, KWOK, Binary

pytestmark = pytest.mark.unit


def _install_fake_build(tmp_path: Path) -> Path:
    staging = tmp_path / "staging"
    staging.mkdir()
    for binary in KWOK.packages:
        (staging / binary.value).write_bytes(b"\x7fELF fake " + binary.value.encode())
        (staging / binary.value).chmod(0o755)
    (staging / cache.ASSETS).mkdir()
    for _, asset in KWOK.assets:  # its usage CRD, kept beside the binaries
        (staging / cache.ASSETS / Path(asset).name).write_text("kind: CustomResourceDefinition\n")
    return cache.install_entry(KWOK, staging=staging, build_seconds=3.0)


def test_missing_entry_says_how_to_build() -> None:
    assert cache.verify(KWOK).state is cache.EntryState.MISSING
    with pytest.raises(EnvironmentStateError, match=r"kwok v0\.8\.0 is not built") as info:
        cache.binary_path(Binary.KWOK)
    assert "skctl env build" in str(info.value)


def test_installed_entry_is_ready_with_manifest(tmp_path: Path) -> None:
    entry = _install_fake_build(tmp_path)
    assert entry == cache.entry_dir(KWOK)
    assert cache.verify(KWOK, deep=True).state is cache.EntryState.READY
    manifest = json.loads((entry / cache.MANIFEST).read_text())
    assert set(manifest["binaries"]) == {"kwok", "kwokctl"}
    assert cache.binary_path(Binary.KWOKCTL) == entry / "kwokctl"


def test_truncated_binary_is_corrupt(tmp_path: Path) -> None:
    entry = _install_fake_build(tmp_path)
    (entry / "kwok").write_bytes(b"short")
    check = cache.verify(KWOK)
    assert check.state is cache.EntryState.CORRUPT
    assert "manifest says" in check.reason
    with pytest.raises(EnvironmentStateError, match=r"cache entry for kwok v0\.8\.0 is corrupt"):
        cache.binary_path(Binary.KWOK)


def test_same_size_tampering_is_caught_by_deep_check(tmp_path: Path) -> None:
    entry = _install_fake_build(tmp_path)
    data = bytearray((entry / "kwok").read_bytes())
    data[-1] ^= 0xFF
    (entry / "kwok").write_bytes(bytes(data))
    assert cache.verify(KWOK).state is cache.EntryState.READY
    assert "SHA-256" in cache.verify(KWOK, deep=True).reason


def test_missing_manifest_is_corrupt(tmp_path: Path) -> None:
    entry = _install_fake_build(tmp_path)
    (entry / cache.MANIFEST).unlink()
    assert cache.verify(KWOK).state is cache.EntryState.CORRUPT


def test_a_group_with_assets_is_ready_only_with_every_asset(tmp_path: Path) -> None:
    staging = tmp_path / "staging-karpenter"
    (staging / cache.ASSETS).mkdir(parents=True)
    (staging / Binary.KARPENTER.value).write_bytes(b"\x7fELF fake karpenter")
    (staging / Binary.KARPENTER.value).chmod(0o755)
    for _, asset in KARPENTER.assets:
        (staging / cache.ASSETS / Path(asset).name).write_text("kind: CustomResourceDefinition\n")
    entry = cache.install_entry(KARPENTER, staging=staging, build_seconds=1.0)
    assert cache.verify(KARPENTER, deep=True).state is cache.EntryState.READY
    paths = cache.asset_paths(KARPENTER)
    assert [p.name for p in paths] == [Path(a).name for _, a in KARPENTER.assets]
    (entry / cache.ASSETS / "karpenter.sh_nodepools.yaml").unlink()
    check = cache.verify(KARPENTER)
    assert check.state is cache.EntryState.CORRUPT
    assert "karpenter.sh_nodepools.yaml is missing" in check.reason
