from __future__ import annotations

from pathlib import Path

import pytest

from simkube.trace import TraceFormat, TraceFormatError
from simkube.trace.detect import detect_format, format_for_path
from simkube.trace.native.format import MAGIC

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("prefix", "expected"), [
    (MAGIC + b"\x00\x01", TraceFormat.NATIVE),
    (b"\x85\xa7version", TraceFormat.SIMKUBE_V2),
    (b"\xde\x00\x05", TraceFormat.SIMKUBE_V2),
    (b'{"version": 2', TraceFormat.SIMKUBE_V2_JSON),
    (b'\xef\xbb\xbf\n  {"version"', TraceFormat.SIMKUBE_V2_JSON),
])
def test_formats_are_told_apart_by_their_first_bytes(prefix: bytes,
                                                     expected: TraceFormat) -> None:
    assert detect_format(prefix) is expected


def test_samples_are_detected(samples: Path) -> None:
    assert detect_format((samples / "dsb-scaling.sktrace").read_bytes()[:16]) is (
        TraceFormat.SIMKUBE_V2)
    assert detect_format((samples / "validation_trace.json").read_bytes()[:16]) is (
        TraceFormat.SIMKUBE_V2_JSON)


def test_anything_else_is_refused_with_what_it_looks_like() -> None:
    with pytest.raises(TraceFormatError, match="the file is empty"):
        detect_format(b"")
    with pytest.raises(TraceFormatError, match="starts with bytes 50 4b 03 04") as caught:
        detect_format(b"PK\x03\x04zipfile")
    assert caught.value.where == "byte 0"
    with pytest.raises(TraceFormatError) as zstd_error:
        detect_format(b"\x28\xb5\x2f\xfd\x00")
    assert "zstd -d" in str(zstd_error.value)


def test_output_format_follows_the_suffix() -> None:
    assert format_for_path(Path("a.sktrace")) is TraceFormat.SIMKUBE_V2
    assert format_for_path(Path("a.JSON")) is TraceFormat.SIMKUBE_V2_JSON
    assert format_for_path(Path("a.trace")) is TraceFormat.NATIVE
    assert TraceFormat.SIMKUBE_V2_JSON.family == "simkube-v2"
