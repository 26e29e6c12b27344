"""How the fidelity benchmark starts each autoscaler, labels its lines and names its plot."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import fidelity_autoscaler
from benchmarks.fidelity_autoscaler import prepare
from simkube.core.version import UPSTREAM
from simkube.env.autoscalers.cluster_autoscaler import AutoscalerBinary
from simkube.env.autoscalers.kinds import AutoscalerKind

pytestmark = pytest.mark.unit


def test_cluster_autoscaler_runs_the_resolved_binary_and_keeps_the_docs_plot_name(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fidelity_autoscaler, "resolve", lambda explicit: AutoscalerBinary(
        path=Path("/bin/ca"), source="test", version="1.36.1", warning="old"))
    chosen = prepare(AutoscalerKind.CLUSTER_AUTOSCALER)
    assert chosen.up_args == ("--autoscaler", "cluster-autoscaler",
                              "--autoscaler-binary", "/bin/ca")
    assert chosen.label == {"autoscaler": "cluster-autoscaler", "autoscaler_version": "1.36.1"}
    assert chosen.plot_name == "fidelity-error.png"
    assert chosen.warning == "old"
    assert not chosen.setup


def test_karpenter_uses_the_cached_binary_and_states_its_consolidation(
        monkeypatch: pytest.MonkeyPatch) -> None:
    looked: list[object] = []
    monkeypatch.setattr(fidelity_autoscaler, "binary_path",
                        lambda binary: looked.append(binary) or Path("/cache/karpenter"))
    monkeypatch.setattr(fidelity_autoscaler, "resolve", lambda explicit: pytest.fail(
        "Karpenter needs no Cluster Autoscaler binary"))
    chosen = prepare(AutoscalerKind.KARPENTER)
    assert looked  # checked in the cache, not built
    assert chosen.up_args == ("--autoscaler", "karpenter", "--consolidation-policy",
                              "WhenEmptyOrUnderutilized", "--consolidate-after", "0s")
    assert chosen.label == {"autoscaler": "karpenter",
                            "autoscaler_version": UPSTREAM.karpenter}
    assert chosen.setup == {"consolidation_policy": "WhenEmptyOrUnderutilized",
                            "consolidate_after": "0s"}
    assert chosen.plot_name == "fidelity-error-karpenter.png"
