"""``spec.trace``: exactly one source, each checked the way sk-driver will use it."""

from __future__ import annotations

from typing import Any

import pytest

from simkube.simulation.errors import SpecError
from simkube.simulation.source import (
    TracerWindow,
    TraceSource,
    mapping,
    parse_source,
    parse_time,
)

pytestmark = pytest.mark.unit


def test_a_path_or_a_url_is_what_sk_driver_reads() -> None:
    assert parse_source({"path": "/t/a.sktrace"}) == ("/t/a.sktrace", None)
    assert parse_source({"url": "file:///t/a.sktrace", "tracer": {}}) == (
        "file:///t/a.sktrace", None)  # an empty mapping is not given


def test_a_tracer_window() -> None:
    assert parse_source({"tracer": {"address": "[::1]:50051", "end": "2026-11-21T10:00:00Z",
                                    "namespaces": ["shop"], "tls": True}}) == (
        None, TracerWindow(address="[::1]:50051", start_ms=0, end_ms=1_795_255_200_000,
                           namespaces=("shop",), tls=True))


@pytest.mark.parametrize(("trace", "message"), [
    ({}, "exactly one of path, url or tracer (found: none)"),
    ({"path": "/a", "tracer": {"address": "t:1"}}, "(found: path, tracer)"),
    ({"tracer": "t:1"}, "spec.trace.tracer must be a mapping"),
    ({"tracer": {"address": "t:1", "namespaces": "shop"}}, "must be a list of namespaces"),
])
def test_refusals_name_the_field(trace: dict[str, Any], message: str) -> None:
    with pytest.raises(SpecError) as caught:
        parse_source(trace)
    assert message in caught.value.message


def test_times_and_mappings() -> None:
    assert parse_time("", field="x") == 0
    assert parse_time("2026-11-21T11:00:00+01:00", field="x") == 1_795_255_200_000
    with pytest.raises(SpecError, match="x 'noon' is not an RFC 3339 time"):
        parse_time("noon", field="x")
    assert mapping(None, field="m") == {}
    with pytest.raises(SpecError, match="m must be a mapping"):
        mapping([1], field="m")
    assert [source.value for source in TraceSource] == ["path", "url", "tracer"]
