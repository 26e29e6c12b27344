"""The autoscaler the fidelity benchmark measures, and the little that differs between them.

The method is the same for Cluster Autoscaler and Karpenter (truth at speed 1 with production
timers, replays through ``skctl run``); what changes is how the environment comes up, which
autoscaler and version every JSON line names, and where the plot goes, so that a Karpenter
run never overwrites the Cluster Autoscaler plot the docs show (or the other way round).

Karpenter's truth consolidates as the environment does by default (``env up
--consolidate-after``'s 0s, Karpenter's own, with ``WhenEmptyOrUnderutilized``): passed
explicitly so the setup line can state it and a change of ``env up``'s default cannot change
the truth unnoticed. Its binary must already be in the cache: the benchmark never builds it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from simkube.core.version import UPSTREAM
from simkube.env.autoscalers.cluster_autoscaler import resolve
from simkube.env.autoscalers.karpenter_catalog import ConsolidationPolicy
from simkube.env.autoscalers.kinds import AutoscalerKind
from simkube.env.toolchain.cache import binary_path
from simkube.env.toolchain.catalog import Binary

CONSOLIDATION_POLICY = ConsolidationPolicy.WHEN_EMPTY_OR_UNDERUTILIZED
CONSOLIDATE_AFTER = "0s"  # trace time; 0s at every speed
PLOT_STEM = "fidelity-error"


@dataclass(frozen=True, kw_only=True)
class Autoscaler:
    kind: AutoscalerKind
    version: str | None  # None: Cluster Autoscaler's could not be read
    up_args: tuple[str, ...]  # ``skctl env up`` flags that start it
    setup: Mapping[str, Any] = field(default_factory=dict)  # for the fidelity.setup line
    warning: str | None = None

    @property
    def label(self) -> dict[str, Any]:
        return {"autoscaler": self.kind.value, "autoscaler_version": self.version}

    @property
    def plot_name(self) -> str:
        """``fidelity-error.png`` for Cluster Autoscaler (the name the docs have always
        used), ``fidelity-error-karpenter.png`` for Karpenter."""
        if self.kind is AutoscalerKind.CLUSTER_AUTOSCALER:
            return f"{PLOT_STEM}.png"
        return f"{PLOT_STEM}-{self.kind.value}.png"


def prepare(kind: AutoscalerKind) -> Autoscaler:
    """``kind`` ready to start; ``EnvironmentStateError`` when its binary is not there."""
    if kind is AutoscalerKind.KARPENTER:
        binary_path(Binary.KARPENTER)  # in the cache, or the error says how to build it
        return Autoscaler(
            kind=kind, version=UPSTREAM.karpenter,
            up_args=("--autoscaler", kind.value, "--consolidation-policy",
                     CONSOLIDATION_POLICY.value, "--consolidate-after", CONSOLIDATE_AFTER),
            setup={"consolidation_policy": CONSOLIDATION_POLICY.value,
                   "consolidate_after": CONSOLIDATE_AFTER})
    binary = resolve(None)
    return Autoscaler(kind=kind, version=binary.version, warning=binary.warning,
                      up_args=("--autoscaler", kind.value, "--autoscaler-binary",
                               str(binary.path)))
