"""Recognising a trace's format from its first bytes, and choosing one for an output path.

Users should never have to say what a file is: the native magic, a msgpack map (SimKube's
``.sktrace``) and a JSON object cannot be confused, and anything else gets an error that
says what the bytes look like instead.
"""

from __future__ import annotations

from pathlib import Path

from simkube.trace.errors import TraceFormatError
from simkube.trace.model.source import TraceFormat
from simkube.trace.native.format import MAGIC

PREFIX_BYTES = 16
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
UTF8_BOM = b"\xef\xbb\xbf"


def _is_msgpack_map(first: int) -> bool:
    return 0x80 <= first <= 0x8F or first in (0xDE, 0xDF)


def detect_format(prefix: bytes) -> TraceFormat:
    """The format of a trace starting with ``prefix`` (its first ``PREFIX_BYTES`` bytes)."""
    if prefix.startswith(MAGIC):
        return TraceFormat.NATIVE
    if prefix and _is_msgpack_map(prefix[0]):
        return TraceFormat.SIMKUBE_V2
    if prefix.removeprefix(UTF8_BOM).lstrip(b" \t\r\n").startswith(b"{"):
        return TraceFormat.SIMKUBE_V2_JSON
    if not prefix:
        raise TraceFormatError("the file is empty", where="byte 0")
    hint = None
    if prefix.startswith(ZSTD_MAGIC):
        hint = "this is zstd-compressed data; decompress it (zstd -d) and try again"
    raise TraceFormatError(f"not a trace: it starts with bytes {prefix[:8].hex(' ')}, which is "
                           "neither a native trace, a SimKube .sktrace nor SimKube JSON",
                           where="byte 0", hint=hint)


def format_for_path(path: Path) -> TraceFormat:
    """The format to write to ``path``: ``.sktrace`` and ``.json`` are SimKube's, else native."""
    suffix = path.suffix.lower()
    if suffix == ".sktrace":
        return TraceFormat.SIMKUBE_V2
    if suffix == ".json":
        return TraceFormat.SIMKUBE_V2_JSON
    return TraceFormat.NATIVE
