from __future__ import annotations

from decimal import Decimal

import pytest

from simkube.core.errors import ConfigError
from simkube.core.quantities import (
    format_cpu,
    format_memory,
    is_quantity,
    parse_quantity,
    scale_quantity,
)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("value", "expected"), [
    ("250m", Decimal("0.25")), ("2", Decimal(2)), (2, Decimal(2)), (0.5, Decimal("0.5")),
    ("1Gi", Decimal(2**30)), ("1.5Mi", Decimal(1.5 * 2**20)), ("1e3", Decimal(1000)),
    ("500M", Decimal(500_000_000)), ("1k", Decimal(1000)),
])
def test_parse(value: object, expected: Decimal) -> None:
    assert parse_quantity(value) == expected


@pytest.mark.parametrize("value", ["", "lots", "1Qi", True, None, "1..2"])
def test_unparseable(value: object) -> None:
    with pytest.raises(ConfigError, match="not a resource quantity"):
        parse_quantity(value)


def test_cpu_is_written_in_whole_cores_or_millicores() -> None:
    assert format_cpu(Decimal(2)) == "2"
    assert format_cpu(Decimal("1.5")) == "1500m"
    assert format_cpu(Decimal("0.0001")) == "1m"  # never rounds a request down to zero


def test_memory_is_written_in_the_largest_exact_unit() -> None:
    assert format_memory(Decimal(2**30)) == "1Gi"
    assert format_memory(Decimal(1536 * 2**20)) == "1536Mi"
    assert format_memory(Decimal(500_000_000)) == "500M"
    assert format_memory(Decimal(1001)) == "1001"


def test_scale() -> None:
    assert scale_quantity("250m", 2, resource="cpu") == "500m"
    assert scale_quantity("512Mi", 0.5, resource="memory") == "256Mi"
    assert scale_quantity("1Gi", 1.5, resource="memory") == "1536Mi"


@pytest.mark.parametrize("value", ["250m", "2", 2, 1.5, "512Mi", "1e3", " 1Gi "])
def test_is_quantity_accepts_what_parse_quantity_parses(value: object) -> None:
    assert is_quantity(value)
    parse_quantity(value)


@pytest.mark.parametrize("value", [None, True, [[80]], {"a": 1}, "lots", "1Qi", ""])
def test_is_quantity_refuses_what_parse_quantity_refuses(value: object) -> None:
    assert not is_quantity(value)
    with pytest.raises(ConfigError):
        parse_quantity(value)
