"""The autoscalers an environment can run, by the name ``env up --autoscaler`` takes."""

from __future__ import annotations

from enum import StrEnum


class AutoscalerKind(StrEnum):
    """Which autoscaler ``env up --autoscaler`` runs beside the services."""

    CLUSTER_AUTOSCALER = "cluster-autoscaler"  # through sk-cloudprov's node groups
    KARPENTER = "karpenter"  # its KWOK provider, NodePools generated from the node groups
