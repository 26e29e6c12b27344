"""What a node or a pod costs over an interval (PricingNodePrice, PricingPodPrice).

Cluster Autoscaler's price expander asks for the price of template nodes (renamed copies of
what NodeGroupTemplateNodeInfo served) and of real nodes, over intervals it chooses; the
group's ``pricePerHour`` is prorated to the second. It also prices every pending pod (and a
"stabilization" pod of its preferred node size) and skips any option it cannot price, so
without pod prices the expander never scales up. A pod is priced by its requests at the
cheapest rates the configured groups sell: half a node's price buys its CPUs, half its
memory, and the lowest price per CPU-hour and per GiB-hour over the groups apply. Only
ratios between options matter to the expander, and these are the same for every option.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal

from google.protobuf.message import DecodeError
from google.protobuf.timestamp_pb2 import Timestamp

from simkube.core.errors import ConfigError, InvalidArgumentError
from simkube.core.quantities import parse_quantity
from simkube.gen.k8s.api.core.v1 import node_pb2, pod_pb2

GIB = Decimal(2**30)


def price_over(*, per_hour: float, start: Timestamp | None, end: Timestamp | None) -> float:
    """``per_hour`` prorated over ``[start, end]``; both must be given, in order."""
    if start is None or end is None:
        raise InvalidArgumentError("startTimestamp and endTimestamp are both required")
    seconds = (end.ToNanoseconds() - start.ToNanoseconds()) / 1e9
    if seconds < 0:
        raise InvalidArgumentError(
            f"endTimestamp {end.ToJsonString()} is before startTimestamp {start.ToJsonString()}")
    return per_hour * seconds / 3600.0


@dataclass(frozen=True, kw_only=True)
class UnitPrices:
    cpu_hour: float  # per core
    gib_hour: float  # per GiB of memory

    @classmethod
    def cheapest(cls, groups: Iterable[tuple[float, Mapping[str, str]]]) -> UnitPrices:
        """From ``(pricePerHour, allocatable)`` of every group."""
        cpu, memory = [], []
        for per_hour, allocatable in groups:
            cores = parse_quantity(allocatable.get("cpu", "0"))
            gib = parse_quantity(allocatable.get("memory", "0")) / GIB
            if cores > 0:
                cpu.append(per_hour / 2 / float(cores))
            if gib > 0:
                memory.append(per_hour / 2 / float(gib))
        return cls(cpu_hour=min(cpu, default=0.0), gib_hour=min(memory, default=0.0))

    def pod_per_hour(self, pod_bytes: bytes) -> float:
        cores, memory = _requests(pod_bytes)
        return float(cores) * self.cpu_hour + float(memory / GIB) * self.gib_hour


def _requests(pod_bytes: bytes) -> tuple[Decimal, Decimal]:
    """A pod's effective CPU and memory requests, as the scheduler counts them."""
    try:
        pod = pod_pb2.Pod.FromString(pod_bytes)
    except DecodeError as exc:
        raise InvalidArgumentError(f"pod_bytes is not a protobuf-encoded Pod: {exc}") from None
    totals = []
    for resource in ("cpu", "memory"):
        try:
            running = sum((_quantity(c.resources.requests, resource)
                           for c in pod.spec.containers), Decimal(0))
            starting = max((_quantity(c.resources.requests, resource)
                            for c in pod.spec.initContainers), default=Decimal(0))
            totals.append(max(running, starting) + _quantity(pod.spec.overhead, resource))
        except ConfigError as exc:
            raise InvalidArgumentError(f"pod {pod.metadata.name!r}: {exc}") from None
    return totals[0], totals[1]


def _quantity(resources: Mapping[str, node_pb2.Quantity], name: str) -> Decimal:
    return parse_quantity(resources[name].string) if name in resources else Decimal(0)
