"""Parsing a Simulation's spec: defaults, every source, and errors that name the field."""

from __future__ import annotations

from typing import Any

import pytest

from simkube.simulation.spec import HpaMode, SpecError, parse_spec

pytestmark = pytest.mark.unit


def simulation(**spec: Any) -> dict[str, Any]:
    spec.setdefault("trace", {"path": "/traces/a.sktrace"})
    return {"metadata": {"name": "s"}, "spec": spec}


def test_defaults() -> None:
    parsed = parse_spec(simulation())
    assert parsed.trace_url == "/traces/a.sktrace"
    assert parsed.tracer is None
    assert (parsed.namespace_prefix, parsed.scale.speed, parsed.repetitions) == ("virtual", 1.0, 1)
    assert parsed.duration == ""
    assert parsed.node_groups is None
    assert parsed.reset_node_groups is True
    assert parsed.paused is False
    assert parsed.hold_for_autoscaler is True
    assert parsed.max_hold_s == 2.0


def test_the_clock_section_turns_holding_off_and_bounds_a_hold() -> None:
    parsed = parse_spec(simulation(clock={"holdForAutoscaler": False, "maxHold": "500ms"}))
    assert (parsed.hold_for_autoscaler, parsed.max_hold_s) == (False, 0.5)


@pytest.mark.parametrize(("clock", "words"), [
    ({"holdForAutoscaler": "no"}, "spec.clock.holdForAutoscaler 'no' must be true or false"),
    ({"maxHold": "2"}, "spec.clock.maxHold"),
    ({"maxHold": "0"}, "spec.clock.maxHold"),
    ({"maxHold": "5m"}, "spec.clock.maxHold '5m' is more than 60s"),
    ("on", "spec.clock must be a mapping"),
])
def test_a_bad_clock_section_is_refused_naming_the_field(clock: Any, words: str) -> None:
    with pytest.raises(SpecError, match=words):
        parse_spec(simulation(clock=clock))


def test_full_spec() -> None:
    parsed = parse_spec(simulation(
        trace={"tracer": {"address": "tracer:50051", "start": "2026-11-21T10:00:00Z",
                          "end": "2026-11-21T11:00:00+00:00", "namespaces": ["a", "b"],
                          "tls": True}},
        namespacePrefix="sim1", speed=10, duration="15m", repetitions=3,
        podTiming={"startupDelay": "1s", "startupJitter": "500ms", "lifetimeJitter": "0s"},
        nodeGroups={"config": "configmap:sk-cloudprov/node-groups", "resetBeforeRun": False},
        pausedTime="2026-11-21T10:00:00Z"))
    assert parsed.tracer is not None
    assert parsed.tracer.address == "tracer:50051"
    assert parsed.tracer.end_ms - parsed.tracer.start_ms == 3_600_000
    assert parsed.tracer.namespaces == ("a", "b")
    assert parsed.tracer.tls is True
    assert parsed.trace_url is None
    assert (parsed.scale.speed, parsed.duration, parsed.repetitions) == (10.0, "15m", 3)
    assert (parsed.startup_delay, parsed.startup_jitter) == ("1s", "500ms")
    assert parsed.node_groups == "configmap:sk-cloudprov/node-groups"
    assert parsed.reset_node_groups is False
    assert parsed.paused is True


def test_url_source() -> None:
    assert parse_spec(simulation(trace={"url": "https://h/t.sktrace"})).trace_url == \
        "https://h/t.sktrace"


@pytest.mark.parametrize(("spec", "message"), [
    ({"trace": {}}, "spec.trace needs exactly one of path, url or tracer (found: none)"),
    ({"trace": {"path": "/a", "url": "http://b"}}, "(found: path, url)"),
    ({"trace": {"path": "relative.sktrace"}}, "spec.trace.path 'relative.sktrace' must be "
                                               "absolute"),
    ({"trace": {"url": "ftp://x"}}, "spec.trace.url 'ftp://x' must start with"),
    ({"trace": {"tracer": {"address": "nohost"}}}, "spec.trace.tracer.address 'nohost' is "
                                                   "not HOST:PORT"),
    ({"trace": {"tracer": {"address": "t:1", "start": "yesterday"}}},
     "spec.trace.tracer.start 'yesterday' is not an RFC 3339 time"),
    ({"trace": {"tracer": {"address": "t:1", "start": "2026-01-01T00:00:00"}}},
     "has no time zone"),
    ({"trace": {"tracer": {"address": "t:1", "start": "2026-01-02T00:00:00Z",
                           "end": "2026-01-01T00:00:00Z"}}}, "end must be after"),
    ({"speed": 0}, "spec.speed 0 must be a positive number"),
    ({"speed": -2.5}, "spec.speed -2.5 must be a positive number"),
    ({"speed": "fast"}, "spec.speed 'fast' is not a number"),
    ({"speed": 2e6}, "spec.speed 2e+06 is above the maximum 1e+06"),  # sk-driver's rule
    ({"repetitions": 0}, "spec.repetitions 0 must be a whole number from 1 to 100"),
    ({"repetitions": 101}, "from 1 to 100"),
    ({"repetitions": True}, "spec.repetitions True"),
    ({"namespacePrefix": "Bad_Prefix"}, "spec.namespacePrefix 'Bad_Prefix' must be a DNS "
                                        "label"),
    ({"namespacePrefix": "a" * 41}, "at most 40 characters"),
    ({"duration": "5 min"}, "spec.duration '5 min' is not a duration"),
    ({"duration": "0s"}, "spec.duration '0s' is zero"),
    ({"podTiming": {"startupDelay": "10"}}, "spec.podTiming.startupDelay '10' is not a "
                                            "duration"),
    ({"pausedTime": "now"}, "spec.pausedTime 'now' is not an RFC 3339 time"),
])
def test_errors_name_the_field(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(SpecError) as error:
        parse_spec(simulation(**spec))
    assert message in error.value.message


def test_missing_spec() -> None:
    with pytest.raises(SpecError, match=r"spec\.trace needs exactly one"):
        parse_spec({"metadata": {"name": "s"}})


def test_hpas_are_active_unless_removed() -> None:
    assert parse_spec(simulation()).hpa is HpaMode.ACTIVE
    assert parse_spec(simulation(hpa="removed")).hpa is HpaMode.REMOVED
    with pytest.raises(SpecError, match=r"spec.hpa 'off' must be active .* or removed"):
        parse_spec(simulation(hpa="off"))
