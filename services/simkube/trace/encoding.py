"""Encoding and copying objects with msgpack, where failures become ``TraceFormatError``.

Objects come from files and from callers, and either can hold what an encoder refuses: a
value nested deeper than the encoder's stack, a type msgpack cannot represent (a set, a
custom class), an integer beyond 64 bits. Copies go through msgpack too, because a
recursive Python copy of a deeply nested object exhausts the interpreter's stack first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgpack

from simkube.trace.errors import TraceFormatError

ENCODE_ERRORS = (ValueError, TypeError, OverflowError, RecursionError, MemoryError)
PACK = msgpack.Packer(use_bin_type=True).pack


def encode_error(exc: BaseException, *, where: str) -> TraceFormatError:
    """What an encoder's complaint means, located."""
    reason = "nested too deeply" if "recursion" in str(exc).lower() else str(exc)[:200]
    return TraceFormatError(f"cannot be encoded: {reason or type(exc).__name__}", where=where)


def pack_checked(value: Any, *, where: str, pack: Callable[[Any], bytes] = PACK) -> bytes:
    """``pack(value)``, or a ``TraceFormatError`` saying why it cannot be encoded."""
    try:
        return pack(value)
    except ENCODE_ERRORS as exc:
        raise encode_error(exc, where=where) from None


def copy_value(value: Any, *, where: str) -> Any:
    """A deep copy that cannot run out of interpreter stack."""
    return msgpack.unpackb(pack_checked(value, where=where), raw=False, strict_map_key=False)
