from __future__ import annotations

from datetime import timedelta

import pytest
from google.protobuf.duration_pb2 import Duration

from simkube.cloudprov.options import parse_overrides
from simkube.core.errors import ConfigError
from simkube.core.simtime import TimeScale
from simkube.gen.clusterautoscaler.cloudprovider.v1.externalgrpc import externalgrpc_pb2 as pb

pytestmark = pytest.mark.unit


def defaults() -> pb.NodeGroupAutoscalingOptions:
    return pb.NodeGroupAutoscalingOptions(
        scaleDownUtilizationThreshold=0.5, scaleDownGpuUtilizationThreshold=0.5,
        zeroOrMaxNodeScaling=False, ignoreDaemonSetsUtilization=False,
        scaleDownUnneededDuration=Duration(seconds=600),
        scaleDownUnreadyDuration=Duration(seconds=1200),
        MaxNodeProvisionDuration=Duration(seconds=900))


def test_overrides_replace_only_what_they_name() -> None:
    overrides = parse_overrides({"scaleDownUnneededDuration": "2m",
                                 "scaleDownUtilizationThreshold": 0.3,
                                 "zeroOrMaxNodeScaling": True,
                                 "maxNodeProvisionDuration": 60}, owner="g")
    answer = overrides.apply(defaults())
    assert answer.scaleDownUnneededDuration.ToTimedelta() == timedelta(minutes=2)
    assert answer.MaxNodeProvisionDuration.ToTimedelta() == timedelta(minutes=1)
    assert answer.scaleDownUtilizationThreshold == pytest.approx(0.3)
    assert answer.zeroOrMaxNodeScaling is True
    # Everything else is CA's default, echoed: an unset Duration would read as zero.
    assert answer.scaleDownUnreadyDuration.ToTimedelta() == timedelta(minutes=20)
    assert answer.scaleDownGpuUtilizationThreshold == pytest.approx(0.5)



def test_override_durations_are_trace_time_divided_by_the_speed() -> None:
    overrides = parse_overrides({"scaleDownUnneededDuration": "2m",
                                 "scaleDownUtilizationThreshold": 0.3}, owner="g")
    answer = overrides.apply(defaults(), scale=TimeScale(20))
    assert answer.scaleDownUnneededDuration.ToTimedelta() == timedelta(seconds=6)
    assert answer.scaleDownUtilizationThreshold == pytest.approx(0.3)  # not a time: as given
    # CA's own defaults are already wall time (its flags are scaled when it restarts).
    assert answer.scaleDownUnreadyDuration.ToTimedelta() == timedelta(minutes=20)

def test_no_overrides_echo_the_defaults() -> None:
    assert parse_overrides({}, owner="g").apply(defaults()) == defaults()


@pytest.mark.parametrize(("options", "message"), [
    ({"scaleDownUnneededTime": "1m"}, r"g: options\.scaleDownUnneededTime: unknown field "
                                      r"\(did you mean 'scaleDownUnneededDuration'\?\)"),
    ({"zeroOrMaxNodeScaling": "yes"}, r"options\.zeroOrMaxNodeScaling: must be true or false"),
    ({"scaleDownUnreadyDuration": -5}, r"options\.scaleDownUnreadyDuration: -5 is negative"),
    ({"scaleDownUnreadyDuration": True}, r"scaleDownUnreadyDuration: .*a duration like 60s"),
])
def test_bad_overrides(options: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_overrides(options, owner="g")
