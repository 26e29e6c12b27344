"""Per-group overrides of Cluster Autoscaler's autoscaling options (NodeGroupGetOptions).

CA sends its own defaults with every NodeGroupGetOptions call and reads any Duration we leave
unset as zero, which would mean "scale down at once". So the answer always starts from the
defaults CA sent and replaces only what the group's config overrides. Durations are written
as in CA's flags (``10m``, ``1h30m``, ``45s``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from typing import Any

from simkube.cloudprov.fields import Section
from simkube.core.simtime import REAL_TIME, TimeScale
from simkube.gen.clusterautoscaler.cloudprovider.v1.externalgrpc import externalgrpc_pb2 as pb


class Option(StrEnum):
    """Config keys, named like the NodeGroupAutoscalingOptions fields they set."""

    SCALE_DOWN_UTILIZATION_THRESHOLD = "scaleDownUtilizationThreshold"
    SCALE_DOWN_GPU_UTILIZATION_THRESHOLD = "scaleDownGpuUtilizationThreshold"
    ZERO_OR_MAX_NODE_SCALING = "zeroOrMaxNodeScaling"
    IGNORE_DAEMONSETS_UTILIZATION = "ignoreDaemonSetsUtilization"
    SCALE_DOWN_UNNEEDED_DURATION = "scaleDownUnneededDuration"
    SCALE_DOWN_UNREADY_DURATION = "scaleDownUnreadyDuration"
    MAX_NODE_PROVISION_DURATION = "maxNodeProvisionDuration"


THRESHOLDS = (Option.SCALE_DOWN_UTILIZATION_THRESHOLD, Option.SCALE_DOWN_GPU_UTILIZATION_THRESHOLD)
FLAGS = (Option.ZERO_OR_MAX_NODE_SCALING, Option.IGNORE_DAEMONSETS_UTILIZATION)
# Config key -> proto field; the proto spells the last one with a capital M.
DURATIONS = {Option.SCALE_DOWN_UNNEEDED_DURATION: "scaleDownUnneededDuration",
             Option.SCALE_DOWN_UNREADY_DURATION: "scaleDownUnreadyDuration",
             Option.MAX_NODE_PROVISION_DURATION: "MaxNodeProvisionDuration"}


@dataclass(frozen=True, kw_only=True)
class Overrides:
    values: dict[Option, float | bool | timedelta]

    def apply(self, defaults: pb.NodeGroupAutoscalingOptions, *,
              scale: TimeScale = REAL_TIME) -> pb.NodeGroupAutoscalingOptions:
        """CA's ``defaults`` (already wall time) with the overrides, durations (trace time)
        converted to wall time at the run's ``scale``."""
        options = pb.NodeGroupAutoscalingOptions()
        options.CopyFrom(defaults)
        for option, value in self.values.items():
            if isinstance(value, timedelta):
                getattr(options, DURATIONS[option]).FromTimedelta(
                    timedelta(seconds=scale.to_wall(value.total_seconds())))
            else:
                setattr(options, option.value, value)
        return options


def parse_overrides(data: Any, *, owner: str) -> Overrides:
    section = Section(data, owner=owner, field="options")
    section.check_keys(list(Option))
    values: dict[Option, float | bool | timedelta] = {}
    for threshold in THRESHOLDS:
        if section.has(threshold):
            values[threshold] = section.number(threshold, low=0.0, high=1.0)
    for flag in FLAGS:
        if section.has(flag):
            values[flag] = section.boolean(flag)
    for option in DURATIONS:
        if section.has(option):
            values[option] = timedelta(seconds=section.seconds(option))
    return Overrides(values=values)
