"""What a node costs over an interval, from its group's hourly price (PricingNodePrice).

Cluster Autoscaler's price expander asks for the price of template nodes (renamed copies of
what NodeGroupTemplateNodeInfo served) and of real nodes, over intervals it chooses. The
group's ``pricePerHour`` from the config is prorated to the second. Pod prices are not
modelled: PricingPodPrice answers UNIMPLEMENTED, which CA's API allows.
"""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp

from simkube.cloudprov.errors import InvalidArgumentError


def price_over(*, per_hour: float, start: Timestamp | None, end: Timestamp | None) -> float:
    """``per_hour`` prorated over ``[start, end]``; both must be given, in order."""
    if start is None or end is None:
        raise InvalidArgumentError("startTimestamp and endTimestamp are both required")
    seconds = (end.ToNanoseconds() - start.ToNanoseconds()) / 1e9
    if seconds < 0:
        raise InvalidArgumentError(
            f"endTimestamp {end.ToJsonString()} is before startTimestamp {start.ToJsonString()}")
    return per_hour * seconds / 3600.0
