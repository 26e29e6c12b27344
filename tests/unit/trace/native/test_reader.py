from __future__ import annotations

import io
from dataclasses import replace
from typing import Any

import pytest
import zstandard

from simkube.trace import (
    NATIVE_VERSION,
    NativeReader,
    PodLifecycle,
    PodRun,
    ReadLimits,
    StateRecord,
    TraceEvent,
    TraceFormatError,
    open_trace,
)
from simkube.trace.model.source import load
from simkube.trace.model.usage import RecordedUsage
from simkube.trace.native.format import MAGIC, PREAMBLE, RECORD_LENGTH, encode_header, envelope_of
from simkube.trace.native.reader import read_preamble
from tests.unit.trace.conftest import (
    HEADER,
    SAMPLES,
    crafted,
    native_bytes,
    pod,
    sample_trace,
    usage_trace,
)

pytestmark = pytest.mark.unit
POD = envelope_of(pod("a"), where="test")


def read_all(data: bytes, limits: ReadLimits | None = None) -> list[Any]:
    """Every item, fully decoded (as a replay would), in comparable form."""
    reader = NativeReader(io.BytesIO(data), limits=limits or ReadLimits())
    items: list[Any] = []
    for item in reader:
        if isinstance(item, TraceEvent):
            items.append(("event", item.ts_ms, item.applied, item.deleted))
        elif isinstance(item, StateRecord):
            items.append(("state", item.objects.decode()))
        else:
            items.append(item)
    return items


def whole(*middle: Any, events: int = 0, state: int = 0, lifecycles: int = 0) -> bytes:
    return crafted([[1, encode_header(HEADER)], *middle, [6, events, state, lifecycles]])


def test_reads_header_state_events_and_lifecycles_in_order() -> None:
    items = read_all(native_bytes(sample_trace()))
    kinds = [item[0] if isinstance(item, tuple) else type(item).__name__ for item in items]
    assert kinds == ["state", "event", "event", "event", "PodLifecycle"]
    assert NativeReader(io.BytesIO(native_bytes(sample_trace()))).header == HEADER
    assert isinstance(items[-1], PodLifecycle)
    assert items[-1].runs[1].running


def test_a_run_reads_with_or_without_its_instance_type() -> None:
    runs = [[1, 2, None], [3, None, None, "m5.large"], [4, None, None, None]]
    data = whole([5, "apps/v1.Deployment", "ns/web", runs], lifecycles=1)
    (lifecycle,) = [item for item in read_all(data) if isinstance(item, PodLifecycle)]
    assert [run.node_type for run in lifecycle.runs] == [None, "m5.large", None]
    assert lifecycle.runs[0] == PodRun(start_ms=1, end_ms=2)


@pytest.mark.parametrize(("data", "problem"), [
    (b"", "magic bytes are missing"),
    (b"SKTRACE?" + b"\x00" * 30, "magic bytes are missing"),
    (PREAMBLE.pack(MAGIC, 3, 0), "format version 3 is newer than this reader"),
    (PREAMBLE.pack(MAGIC, 0, 0), "unknown format version 0"),
    (PREAMBLE.pack(MAGIC, 1, 4), "flags 0x4"),
])
def test_refuses_what_it_cannot_read_before_decompressing(data: bytes, problem: str) -> None:
    with pytest.raises(TraceFormatError, match=problem):
        read_preamble(io.BytesIO(data))


def test_future_version_says_to_upgrade() -> None:
    with pytest.raises(TraceFormatError) as caught:
        NativeReader(io.BytesIO(crafted([[1, {}]], version=9)))
    assert "upgrade simkube-py" in str(caught.value)


def test_every_truncation_is_reported_never_a_short_trace() -> None:
    data = native_bytes(sample_trace())
    for size in range(len(data)):
        with pytest.raises(TraceFormatError):
            read_all(data[:size])


@pytest.mark.parametrize(("records", "problem"), [
    ([[2, []]], "first record must be the header"),
    ([[1, encode_header(HEADER)], "text"], "list starting with its kind"),
    ([[1, encode_header(HEADER)], [9, 1]], "unexpected record kind 9"),
    ([[1, encode_header(HEADER)], [3, [[True, [], []]]]], "not a non-negative integer"),
    ([[1, encode_header(HEADER)], [3, [[-5, [], []]]]], "not a non-negative integer"),
    ([[1, encode_header(HEADER)], [3, [[5, [], []], [4, [], []]]]],
     "timestamp 4 is earlier than the previous event's 5"),
    ([[1, encode_header(HEADER)], [3, [[5, [], []]]], [3, [[4, [], []]]]], "earlier"),
    ([[1, encode_header(HEADER)], [3, [[5, {}, []]]]], "expected a list of objects"),
    ([[1, encode_header(HEADER)], [3, [[5, [["v1", "Pod"]], []]]]], "malformed object"),
    ([[1, encode_header(HEADER)], [3, [[5], []]]], "an event is"),
    ([[1, encode_header(HEADER)], [3, []]], "non-empty list of events"),
    ([[1, encode_header(HEADER)], [4, [], []]], "continuation record must follow"),
    ([[1, encode_header(HEADER)], [3, [[1, [], []]]], [2, [POD]]], "initial state after"),
    ([[1, encode_header(HEADER)], [5, "v1.Pod", "ns/a", [[1, "soon", None]]]],
     "a pod run is"),
    ([[1, encode_header(HEADER)], [5, "v1.Pod", "ns/a", [[1, None, None, 7]]]],
     "a pod run is"),
    ([[1, encode_header(HEADER)], [5, "v1.Pod", "ns/a", [[1, None, None, "m5", 1]]]],
     "a pod run is"),
    ([[1, encode_header(HEADER)], [5, "v1.Pod", 7, []]], "a lifecycle record is"),
    ([[1, encode_header(HEADER)], [6, 1, 0, 0]], "end record counts 1 events"),
    ([[1, encode_header(HEADER)], [6, "x"]], "end record holds 3 counts"),
    ([[1, encode_header(HEADER)], [6, 0, 0, 0, 12345]], "checksum mismatch"),
])
def test_wrong_shapes_and_types_name_the_record(records: list[Any], problem: str) -> None:
    with pytest.raises(TraceFormatError, match=problem) as caught:
        read_all(crafted(records))
    assert caught.value.where is not None
    assert "record" in caught.value.where


def test_data_after_the_end_record_is_refused() -> None:
    data = crafted([[1, encode_header(HEADER)], [6, 0, 0, 0], [6, 0, 0, 0]])
    with pytest.raises(TraceFormatError, match="after the end record"):
        read_all(data)


def test_declared_record_length_is_capped_before_reading() -> None:
    body = RECORD_LENGTH.pack(2**31) + b"\x90"
    data = PREAMBLE.pack(MAGIC, 1, 0) + zstandard.ZstdCompressor().compress(body)
    with pytest.raises(TraceFormatError, match="record length 2147483648 is outside"):
        NativeReader(io.BytesIO(data))


def test_giant_declared_list_inside_a_record_is_refused_without_allocating() -> None:
    data = crafted([[1, encode_header(HEADER)]])
    payload = b"\x92\x03\xdd\xff\xff\xff\xff"  # [3, <list of 4 billion>]
    body = RECORD_LENGTH.pack(len(payload)) + payload
    data += b""  # header stream kept, then a second zstd frame with the hostile record
    data = data + zstandard.ZstdCompressor().compress(body)
    with pytest.raises(TraceFormatError, match="declared length larger"):
        read_all(data)


def test_decompression_bomb_stops_at_the_limit() -> None:
    bomb = whole([3, [[1, [envelope_of(pod("a", annotations={"x": "y" * 300_000}),
                                       where="t")], []]]], events=1)
    with pytest.raises(TraceFormatError, match="decompresses to more than 100000 bytes"):
        read_all(bomb, ReadLimits(max_decompressed_bytes=100_000))


def test_a_bit_flip_anywhere_is_detected_or_harmless() -> None:
    data = native_bytes(sample_trace())
    expected = read_all(data)
    detected = 0
    for offset in range(len(data)):
        for bit in (0, 3, 7):
            flipped = bytearray(data)
            flipped[offset] ^= 1 << bit
            try:
                items = read_all(bytes(flipped))
            except TraceFormatError:
                detected += 1
                continue
            # A few zstd header bits (e.g. the window size) do not change the content.
            assert items == expected, f"flip at byte {offset} bit {bit} changed the trace"
    assert detected > len(data) * 3 * 0.95


def test_corrupt_compressed_data_names_the_file_offset() -> None:
    data = bytearray(native_bytes(sample_trace()))
    data[PREAMBLE.size + 20:PREAMBLE.size + 40] = b"\xff" * 20
    with pytest.raises(TraceFormatError) as caught:
        read_all(bytes(data))
    assert caught.value.where


def test_empty_trace_reads_as_no_events() -> None:
    assert read_all(whole()) == []


def test_every_released_version_stays_readable() -> None:
    fixtures = SAMPLES.parent / "native"
    loaded = load(open_trace(fixtures / "v1-sample.trace"))
    assert loaded.header.version == 1
    loaded.header = replace(loaded.header, version=NATIVE_VERSION)
    assert loaded == sample_trace()
    assert loaded.usage == ()
    current = load(open_trace(fixtures / "v2-sample.trace"))
    assert current == usage_trace()
    assert current.header.version == 2
    assert sorted(path.name for path in fixtures.glob("*.trace")) == ["v1-sample.trace",
                                                                       "v2-sample.trace"]


def test_usage_records_are_read_with_their_values_as_written() -> None:
    items = read_all(native_bytes(usage_trace()))
    usage = [item for item in items if isinstance(item, RecordedUsage)]
    assert [record.checked() for record in usage] == list(usage_trace().usage)
    bad = [7, "apps/v1.Deployment", "shop/web", 15_000, [[0, 1, -1, "x"]]]
    reader = NativeReader(io.BytesIO(crafted([[1, encode_header(HEADER)], bad,
                                              [6, 0, 0, 0, 1]], version=2)))
    list(reader.events())
    assert reader.usage[0].rows == ([0, 1, -1, "x"],)
    assert "cpu_millicores is negative" in reader.usage[0].problems()[0][1]


@pytest.mark.parametrize(("record", "problem"), [
    ([7, "apps/v1.Deployment", "shop/web", 15_000], "a usage record is"),
    ([7, 3, "shop/web", 15_000, []], "a usage record is"),
    ([7, "apps/v1.Deployment", "shop/web", 15_000, {"t": 1}], "a usage record is"),
])
def test_malformed_usage_records_name_the_record(record: list[Any], problem: str) -> None:
    with pytest.raises(TraceFormatError, match=problem) as caught:
        read_all(crafted([[1, encode_header(HEADER)], record, [6, 0, 0, 0, 1]], version=2))
    assert "record 2" in str(caught.value)


def test_usage_limits_bound_samples_per_series_and_series_per_trace() -> None:
    series = [7, "v1.Pod", "shop/p", 1, [[t, 1, 1, 1] for t in range(3)]]
    data = crafted([[1, encode_header(HEADER)], series, series, [6, 0, 0, 0, 2]], version=2)
    with pytest.raises(TraceFormatError, match="3 usage samples exceed the reader's limit of 2"):
        read_all(data, ReadLimits(max_usage_samples=2))
    with pytest.raises(TraceFormatError, match="more than 1 workloads with usage"):
        read_all(data, ReadLimits(max_usage_series=1))


def test_a_usage_record_in_a_version_1_file_is_refused() -> None:
    data = crafted([[1, encode_header(HEADER)], [7, "v1.Pod", "a/b", 1, []], [6, 0, 0, 0]])
    with pytest.raises(TraceFormatError, match="unexpected record kind 7"):
        read_all(data)


def test_end_record_counts_usage_records_in_version_2() -> None:
    data = crafted([[1, encode_header(HEADER)], [6, 0, 0, 0, 1]], version=2)
    with pytest.raises(TraceFormatError, match="end record counts 1 usage records"):
        read_all(data)
