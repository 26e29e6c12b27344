from __future__ import annotations

from typing import Any

import msgpack
import pytest

from simkube.trace import ReadLimits, TraceFormatError, TraceHeader, TrackedKind
from simkube.trace.native.format import (
    EncodedBatch,
    check_envelopes,
    decode_header,
    encode_header,
    envelope_of,
)
from tests.unit.trace.conftest import HEADER, pod

pytestmark = pytest.mark.unit


def test_header_round_trips_and_ignores_unknown_keys() -> None:
    encoded = encode_header(HEADER) | {"added_in_a_later_release": True}
    assert decode_header(encoded, version=2, where="record 1") == HEADER


@pytest.mark.parametrize(("raw", "problem"), [
    ([], "must be a map"),
    ({"created_ms": "yesterday"}, "created_ms"),
    ({"source_cluster": 5}, "source_cluster"),
    ({"tracked_kinds": {}}, "tracked_kinds must be a list"),
    ({"tracked_kinds": [{"kind": ""}]}, "non-empty 'kind'"),
    ({"tracked_kinds": [{"kind": "v1.Pod", "pod_template_paths": [1]}]}, "list of strings"),
    ({"tracked_kinds": [{"kind": "v1.Pod", "skip_owned": "yes"}]}, "booleans"),
])
def test_bad_headers_are_refused(raw: Any, problem: str) -> None:
    with pytest.raises(TraceFormatError, match=problem):
        decode_header(raw, version=1, where="record 1")


def test_header_defaults() -> None:
    header = decode_header({}, version=1, where="r")
    assert header == TraceHeader(version=1)
    assert decode_header({"tracked_kinds": [{"kind": "v1.Pod"}]}, version=1,
                         where="r").tracked_kinds == (TrackedKind(kind_key="v1.Pod"),)


def test_envelope_keeps_identity_next_to_the_encoded_body() -> None:
    env = envelope_of(pod("a", "ns"), where="x")
    assert env[:4] == ["v1", "Pod", "ns", "a"]
    assert msgpack.unpackb(env[4]) == pod("a", "ns")
    batch = EncodedBatch(check_envelopes([env], where="r"), where="r", limits=ReadLimits())
    assert [ref.name for ref in batch.refs()] == ["a"]
    assert batch.decode() == [pod("a", "ns")]


@pytest.mark.parametrize("env", [
    "not a list", ["v1", "Pod", "ns", "a"], ["v1", "Pod", "ns", "", b""],
    ["v1", "Pod", None, "a", b""], ["v1", "Pod", "ns", "a", "text"],
])
def test_malformed_envelopes_are_refused(env: Any) -> None:
    with pytest.raises(TraceFormatError, match="malformed object envelope"):
        check_envelopes([env], where="record 2")
    with pytest.raises(TraceFormatError, match="expected a list"):
        check_envelopes(env if not isinstance(env, list) else {}, where="record 2")


def test_decoding_reports_a_body_that_lies_about_its_identity() -> None:
    env = envelope_of(pod("a", "ns"), where="x")
    env[3] = "b"
    batch = EncodedBatch([env], where="record 4", index=2, limits=ReadLimits(), source="t")
    with pytest.raises(TraceFormatError, match="t: record 4, event 2, object 0: object body"):
        batch.decode()


def test_decoding_reports_an_undecodable_body() -> None:
    batch = EncodedBatch([["v1", "Pod", "ns", "a", b"\xc1"]], where="record 4",
                         limits=ReadLimits())
    with pytest.raises(TraceFormatError, match="record 4, object 0: undecodable msgpack"):
        batch.decode()
