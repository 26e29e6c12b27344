from __future__ import annotations

import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from simkube.cloudprov.errors import InvalidArgumentError
from simkube.cloudprov.pricing import price_over

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
