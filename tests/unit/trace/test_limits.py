from __future__ import annotations

import io

import msgpack
import pytest

from simkube.trace import ReadLimits, TraceFormatError
from simkube.trace.limits import describe_decode_error, streaming_unpacker, unpack_capped

pytestmark = pytest.mark.unit
LIMITS = ReadLimits()


def test_unpacks_a_plain_value() -> None:
    assert unpack_capped(msgpack.packb({"a": [1, 2]}), limits=LIMITS, where="x") == {"a": [1, 2]}


@pytest.mark.parametrize(("data", "problem"), [
    (b"\xdd\xff\xff\xff\xff", "exceeds max_array_len"),  # 4 billion elements, 5 bytes
    (b"\xdf\xff\xff\xff\xff", "exceeds max_map_len"),
    (b"\xdb\x7f\xff\xff\xff" + b"a", "incomplete"),  # 2 GiB string, 1 byte
    (b"\xd4\x01\x02", "extension"),
    (b"\xc7\x00\x05", "extension"),
    (b"\x81\x01\x02", "int is not allowed for map key"),
    (b"\xa2\xff\xfe", "not valid UTF-8"),
    (b"\x91" * 5000 + b"\xc0", "nested too deeply"),
    (b"\x01\x02", "unexpected bytes after the value"),
    (b"\xc1", "undecodable"),
])
def test_hostile_values_fail_cleanly(data: bytes, problem: str) -> None:
    with pytest.raises(TraceFormatError, match=problem) as caught:
        unpack_capped(data, limits=LIMITS, where="record 7")
    assert caught.value.where == "record 7"


def test_streaming_unpacker_bounds_declared_lengths_by_the_file_size() -> None:
    unpacker = streaming_unpacker(io.BytesIO(b"\xdd\x00\x01\x00\x00"), limits=LIMITS,
                                  size_hint=5)
    with pytest.raises(ValueError, match="exceeds max_array_len"):
        unpacker.unpack()


def test_unknown_errors_are_described_by_their_text() -> None:
    assert describe_decode_error(ValueError("odd")) == "odd"
    assert describe_decode_error(MemoryError()) == "a value too large to hold in memory"
