from __future__ import annotations

import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from simkube.cloudprov.pricing import UnitPrices, price_over
from simkube.core.errors import InvalidArgumentError
from simkube.gen.k8s.api.core.v1 import pod_pb2

pytestmark = pytest.mark.unit


def at(seconds: int) -> Timestamp:
    return Timestamp(seconds=seconds)


def test_price_is_prorated_to_the_second() -> None:
    assert price_over(per_hour=0.384, start=at(0), end=at(3600)) == pytest.approx(0.384)
    assert price_over(per_hour=2.0, start=at(100), end=at(100 + 90 * 60)) == pytest.approx(3.0)
    assert price_over(per_hour=2.0, start=at(5), end=at(5)) == 0.0


def test_bad_intervals_are_refused() -> None:
    with pytest.raises(InvalidArgumentError, match=r"endTimestamp .* is before startTimestamp"):
        price_over(per_hour=1.0, start=at(10), end=at(5))
    with pytest.raises(InvalidArgumentError, match="both required"):
        price_over(per_hour=1.0, start=None, end=at(5))


def pod(*containers: dict[str, str], init: tuple[dict[str, str], ...] = (),
        overhead: dict[str, str] | None = None) -> bytes:
    message = pod_pb2.Pod()
    message.metadata.name = "web-1"
    for target, specs in ((message.spec.containers, containers),
                          (message.spec.initContainers, init)):
        for requests in specs:
            container = target.add(name="c")
            for name, value in requests.items():
                container.resources.requests[name].string = value
    for name, value in (overhead or {}).items():
        message.spec.overhead[name].string = value
    return message.SerializeToString()


PRICES = UnitPrices.cheapest([(0.384, {"cpu": "8", "memory": "32Gi"}),
                              (0.096, {"cpu": "2", "memory": "8Gi"}),
                              (1.0, {"cpu": "2", "memory": "64Gi"})])


def test_unit_prices_are_the_cheapest_any_group_sells() -> None:
    assert PRICES.cpu_hour == pytest.approx(0.024)   # half of 0.096 over 2 cores
    assert PRICES.gib_hour == pytest.approx(0.006)  # half of 0.384 over 32 GiB (or 0.096 over 8)


def test_a_pod_costs_its_requests_as_the_scheduler_counts_them() -> None:
    plain = PRICES.pod_per_hour(pod({"cpu": "1", "memory": "1Gi"}, {"cpu": "500m"}))
    assert plain == pytest.approx(1.5 * 0.024 + 1 * 0.006)
    # An init container larger than the sum counts instead; overhead adds on top.
    started = PRICES.pod_per_hour(pod({"cpu": "1"}, init=({"cpu": "4"},), overhead={"cpu": "1"}))
    assert started == pytest.approx(5 * 0.024)
    assert PRICES.pod_per_hour(pod({})) == 0.0


def test_bad_pod_bytes_and_quantities_are_invalid_arguments() -> None:
    with pytest.raises(InvalidArgumentError, match="not a protobuf-encoded Pod"):
        PRICES.pod_per_hour(b"\xff\xff")
    with pytest.raises(InvalidArgumentError, match="pod 'web-1'"):
        PRICES.pod_per_hour(pod({"cpu": "lots"}))
