from __future__ import annotations

import io

import pytest
import zstandard

from simkube.trace import ReadLimits, TraceFormatError
from simkube.trace.native.format import RECORD_LENGTH
from simkube.trace.native.frames import READ_CHUNK, RecordFrames

pytestmark = pytest.mark.unit


def frames_of(body: bytes, limits: ReadLimits | None = None) -> RecordFrames:
    return RecordFrames(io.BytesIO(zstandard.ZstdCompressor().compress(body)),
                        limits=limits or ReadLimits(), base_offset=12)


def framed(*payloads: bytes) -> bytes:
    return b"".join(RECORD_LENGTH.pack(len(payload)) + payload for payload in payloads)


def test_yields_records_across_chunk_boundaries_with_their_offsets() -> None:
    payloads = [bytes([index % 256]) * (READ_CHUNK // 3 + index) for index in range(7)]
    frames = frames_of(framed(*payloads))
    for payload in payloads:
        assert frames.next() == payload
    assert frames.next() is None
    assert frames.count == 8
    assert frames.offset == sum(len(payload) + 4 for payload in payloads)


def test_truncated_length_or_body_is_an_error() -> None:
    with pytest.raises(TraceFormatError, match="inside a record length"):
        frames_of(b"\x00\x00").next()
    with pytest.raises(TraceFormatError, match="inside a record of 10 bytes"):
        frames_of(RECORD_LENGTH.pack(10) + b"abc").next()


def test_zero_and_oversized_lengths_are_errors() -> None:
    with pytest.raises(TraceFormatError, match="record length 0"):
        frames_of(RECORD_LENGTH.pack(0)).next()
    with pytest.raises(TraceFormatError, match=r"record length 100 is outside 1\.\.50"):
        frames_of(framed(b"x" * 100), ReadLimits(max_record_bytes=50)).next()


def test_expect_end_refuses_trailing_bytes() -> None:
    frames = frames_of(framed(b"a") + b"junk")
    assert frames.next() == b"a"
    with pytest.raises(TraceFormatError, match="after the end record"):
        frames.expect_end()
