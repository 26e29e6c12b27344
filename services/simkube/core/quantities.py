"""Kubernetes resource quantities (``250m``, ``1.5``, ``512Mi``, ``1e3``): parse, scale, print.

Shared by the trace tools (scaling requests) and sk-cloudprov (pricing a pod by its
requests). Scaling "every container's CPU by 0.5" must give quantities the API server
accepts and a human reads as intended, so CPU is written in millicores and memory in the
largest unit that represents it exactly, the way people write them in manifests.
"""

from __future__ import annotations

import re
from decimal import ROUND_CEILING, Decimal, InvalidOperation

from simkube.core.errors import ConfigError

_SUFFIXES = {
    "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": Decimal(1),
    "k": Decimal("1e3"), "M": Decimal("1e6"), "G": Decimal("1e9"), "T": Decimal("1e12"),
    "P": Decimal("1e15"), "E": Decimal("1e18"),
    "Ki": Decimal(2**10), "Mi": Decimal(2**20), "Gi": Decimal(2**30), "Ti": Decimal(2**40),
    "Pi": Decimal(2**50), "Ei": Decimal(2**60),
}
_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)([a-zA-Z]*)$")
_MEMORY_UNITS = ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki", "E", "P", "T", "G", "M", "k")


def is_quantity(value: object) -> bool:
    """Whether ``parse_quantity`` would accept ``value``; cheap, for checking many fields."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return False
    found = _QUANTITY.match(str(value).strip())
    return found is not None and found.group(2) in _SUFFIXES


def parse_quantity(value: object) -> Decimal:
    """The quantity's value in base units (cores, bytes)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ConfigError(f"{value!r} is not a resource quantity")
    text = str(value).strip()
    found = _QUANTITY.match(text)
    if not found or found.group(2) not in _SUFFIXES:
        raise ConfigError(f"{value!r} is not a resource quantity (e.g. 250m, 2, 512Mi)")
    try:
        return Decimal(found.group(1)) * _SUFFIXES[found.group(2)]
    except InvalidOperation:
        raise ConfigError(f"{value!r} is not a resource quantity") from None


def format_cpu(cores: Decimal) -> str:
    """Whole cores as ``2``, anything else in millicores (at least ``1m`` if positive)."""
    millis = (cores * 1000).to_integral_value(rounding=ROUND_CEILING)
    if millis % 1000 == 0:
        return str(int(millis // 1000))
    return f"{int(millis)}m"


def format_memory(size: Decimal) -> str:
    """Bytes in the largest unit that holds them exactly (``1Gi``, ``1536Mi``, ``500M``)."""
    size = size.to_integral_value(rounding=ROUND_CEILING)
    for unit in _MEMORY_UNITS:
        if size and size % _SUFFIXES[unit] == 0:
            return f"{int(size / _SUFFIXES[unit])}{unit}"
    return str(int(size))


def scale_quantity(value: object, factor: float, *, resource: str) -> str:
    """``value`` times ``factor``, printed the way ``resource`` (cpu or memory) is written."""
    scaled = parse_quantity(value) * Decimal(str(factor))
    return format_cpu(scaled) if resource == "cpu" else format_memory(scaled)
