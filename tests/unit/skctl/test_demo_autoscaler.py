"""The demo runs Karpenter, which every machine has, unless a Cluster Autoscaler is given."""

from __future__ import annotations

from pathlib import Path

import pytest

from simkube.env.autoscalers.kinds import AutoscalerKind
from simkube.skctl.demo_autoscaler import choose

pytestmark = pytest.mark.unit


def test_karpenter_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SIMKUBE_CLUSTER_AUTOSCALER", raising=False)
    chosen = choose(binary=None)
    assert chosen.kind is AutoscalerKind.KARPENTER
    assert chosen.builds == ("etcd", "kwok", "kubernetes", "kube-scheduler", "metrics-server",
                             "karpenter")
    assert chosen.up_args == ("--autoscaler", "karpenter", "--consolidate-after", "30s")
    assert chosen.run_args == ()


@pytest.mark.parametrize("given", ["flag", "variable"])
def test_cluster_autoscaler_when_a_binary_is_given(monkeypatch: pytest.MonkeyPatch,
                                                   given: str) -> None:
    binary = Path("/opt/ca/cluster-autoscaler")
    monkeypatch.setenv("SIMKUBE_CLUSTER_AUTOSCALER", "   " if given == "flag" else str(binary))
    chosen = choose(binary=binary if given == "flag" else None)
    assert chosen.kind is AutoscalerKind.CLUSTER_AUTOSCALER
    assert "karpenter" not in chosen.builds  # nothing it does not run is built
    assert "metrics-server" in chosen.builds  # both clusters run it for the shop's HPA
    assert "cloudprov-front" in chosen.builds  # CA reaches sk-cloudprov through it
    assert chosen.up_args[-2:] == ("--autoscaler-binary", str(binary))
    assert chosen.run_args == ("--timer", "clusterAutoscaler.scale-down-delay-after-add=1m",
                               "--timer", "clusterAutoscaler.scale-down-unneeded-time=1m")
