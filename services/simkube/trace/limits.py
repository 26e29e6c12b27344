"""Caps that keep a hostile or corrupt trace from costing unbounded memory or time.

A length declared inside a file is a claim, not a fact: decoders would happily allocate a
list of four billion slots because five bytes said so. Every reader passes these caps to the
decoder, and never lets a declared length exceed the bytes actually present.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgpack

from simkube.trace.errors import TraceFormatError

MiB = 1024 * 1024
GiB = 1024 * MiB


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadLimits:
    """Upper bounds a reader enforces; the defaults fit any real cluster's trace."""

    max_record_bytes: int = 64 * MiB  # one native record, or one SimKube event / section
    max_decompressed_bytes: int = 64 * GiB  # a whole native stream, after zstd
    max_document_bytes: int = 1 * GiB  # a SimKube JSON document, read whole
    max_string_bytes: int = 16 * MiB
    max_items: int = 1_000_000  # elements of one list or entries of one map
    # Recorded usage: a day sampled every 15 s is 5,760 samples; 100,000 is over 17 days.
    max_usage_samples: int = 100_000  # samples of one workload's series
    max_usage_series: int = 100_000  # workloads with usage in one trace


DEFAULT_LIMITS = ReadLimits()


def _refuse_extension(code: int, data: bytes) -> Any:
    raise ValueError(f"msgpack extension type {code} is not part of any trace format")


DECODE_ERRORS = (ValueError, TypeError, RecursionError, MemoryError,
                 msgpack.exceptions.UnpackException)
"""Everything msgpack (or the code walking its output) raises for bad input."""


def unpack_raw(data: bytes | bytearray, limits: ReadLimits) -> Any:
    """Decode one complete msgpack value whose declared lengths cannot exceed its own size;
    raises the decoder's own exceptions (see ``DECODE_ERRORS``)."""
    # Only lists and maps are allocated from their declared length before their contents
    # are read, so only they need the size-relative cap; strings and binaries are checked
    # against the bytes present before anything is allocated.
    size = len(data)
    items = size if size < limits.max_items else limits.max_items
    return msgpack.unpackb(
        data, raw=False, strict_map_key=True, max_ext_len=0, ext_hook=_refuse_extension,
        max_str_len=limits.max_string_bytes, max_bin_len=limits.max_record_bytes,
        max_array_len=items, max_map_len=items)


def unpack_capped(data: bytes | bytearray, *, limits: ReadLimits, where: str) -> Any:
    """``unpack_raw`` whose failures are ``TraceFormatError``s located at ``where``."""
    try:
        return unpack_raw(data, limits)
    except DECODE_ERRORS as exc:
        raise TraceFormatError(f"undecodable msgpack: {describe_decode_error(exc)}",
                               where=where) from None


def streaming_unpacker(stream: Any, *, limits: ReadLimits, size_hint: int | None) -> Any:
    """A msgpack Unpacker over a file whose values are decoded one at a time.

    ``size_hint`` (the file size, when known) also bounds declared lengths: nothing in a file
    can hold more elements than the file has bytes.
    """
    bound = limits.max_items if size_hint is None else min(size_hint, limits.max_items)
    return msgpack.Unpacker(
        stream, raw=False, strict_map_key=True, max_ext_len=0, ext_hook=_refuse_extension,
        read_size=256 * 1024,
        max_buffer_size=limits.max_record_bytes,
        max_str_len=limits.max_string_bytes, max_bin_len=limits.max_record_bytes,
        max_array_len=bound, max_map_len=bound)


_DECODE_PROBLEMS: tuple[tuple[type[BaseException], str], ...] = (
    (msgpack.exceptions.StackError, "values nested too deeply"),
    (msgpack.exceptions.ExtraData, "unexpected bytes after the value"),
    (msgpack.exceptions.BufferFull, "a value larger than the reader's limit"),
    (msgpack.exceptions.OutOfData, "the data ends in the middle of a value (truncated?)"),
    (UnicodeDecodeError, "a string that is not valid UTF-8"),
    (RecursionError, "values nested too deeply"),
    (MemoryError, "a value too large to hold in memory"),
)


def describe_decode_error(exc: BaseException) -> str:
    """A decoder's complaint in words a user can act on."""
    for problem, words in _DECODE_PROBLEMS:
        if isinstance(exc, problem):
            return words
    text = (str(exc) or type(exc).__name__)[:200]
    if "max_ext_len" in text:
        return "a msgpack extension type, which no trace format uses"
    if "exceeds max_" in text:  # e.g. "4294967295 exceeds max_array_len(5)"
        return f"a declared length larger than the data can hold ({text})"
    return text
