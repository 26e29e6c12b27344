from __future__ import annotations

import hashlib
from typing import Any

import pytest

from simkube.trace import PodLifecycle, PodRun, TraceEvent, TraceFormatError, TrackedKind
from simkube.trace.simkube_v2.document import (
    IndexBuilder,
    check_version,
    decode_config,
    decode_event,
    decode_lifecycle,
    encode_config,
    encode_event,
    encode_lifecycle,
    stable_hash,
)
from tests.unit.trace.conftest import deployment, pod

pytestmark = pytest.mark.unit


def test_only_version_2_is_read() -> None:
    assert check_version(2) == 2
    for bad in (1, 3, "2", True):
        with pytest.raises(TraceFormatError, match="not supported"):
            check_version(bad)


def test_config_round_trips_omitting_defaults_like_simkube() -> None:
    raw = {"trackedObjects": {
        "apps/v1.Deployment": {"podSpecTemplatePaths": ["/spec/template"]},
        "v1.Pod": {"podSpecTemplatePaths": [""], "skipOwned": True, "trackLifecycle": True},
        "batch/v1.CronJob": {"trackLifecycle": True}}}
    kinds = decode_config(raw)
    assert kinds[1] == TrackedKind(kind_key="v1.Pod", pod_template_paths=("",),
                                   track_lifecycle=True, skip_owned=True)
    assert encode_config(kinds) == raw


@pytest.mark.parametrize(("raw", "problem"), [
    ([], "trackedObjects must be a map"),
    ({"trackedObjects": []}, "trackedObjects must be a map"),
    ({"trackedObjects": {"v1.Pod": {"podSpecTemplatePaths": "/spec"}}}, "list of strings"),
    ({"trackedObjects": {"v1.Pod": {"trackLifecycle": 1}}}, "booleans"),
])
def test_bad_config_is_refused(raw: Any, problem: str) -> None:
    with pytest.raises(TraceFormatError, match=problem):
        decode_config(raw)


def test_events_convert_seconds_to_milliseconds_and_back() -> None:
    raw = {"ts": 1710892138, "applied_objs": [deployment()], "deleted_objs": [pod()]}
    event = decode_event(raw, where="events[0]")
    assert event == TraceEvent(ts_ms=1710892138000, applied=[deployment()], deleted=[pod()])
    assert encode_event(TraceEvent(ts_ms=1710892138999, applied=[deployment()])) == {
        "ts": 1710892138, "applied_objs": [deployment()], "deleted_objs": []}


@pytest.mark.parametrize(("raw", "problem"), [
    ("event", "an event must be a map"),
    ({"ts": 1.5}, "Unix seconds"),
    ({"ts": -1}, "Unix seconds"),
    ({"ts": 2**62}, "Unix seconds"),
    ({"ts": 1, "applied_objs": {}}, "applied_objs must be a list"),
    ({"ts": 1, "deleted_objs": [{"kind": "Pod"}]}, r"events\[4\]\.deleted_objs\[0\]"),
])
def test_bad_events_name_the_event(raw: Any, problem: str) -> None:
    with pytest.raises(TraceFormatError, match=problem):
        decode_event(raw, where="events[4]")


def test_lifecycles_flatten_hashes_into_launch_order() -> None:
    lifecycle = decode_lifecycle(["v1.Pod", "ns/a"], [
        (7, [{"Finished": [30, 40]}, "Empty"]),
        (9, [{"Finished": [10, 20]}, {"Running": 50}])], where="pod_lifecycles entry 0")
    assert lifecycle == PodLifecycle(owner_kind="v1.Pod", owner="ns/a", runs=(
        PodRun(start_ms=10_000, end_ms=20_000, spec_hash=9),
        PodRun(start_ms=30_000, end_ms=40_000, spec_hash=7),
        PodRun(start_ms=50_000, spec_hash=9)))
    assert encode_lifecycle(lifecycle, fallback_hash=1) == {
        9: [{"Finished": [10, 20]}, {"Running": 50}], 7: [{"Finished": [30, 40]}]}


def test_native_runs_get_the_fallback_hash() -> None:
    lifecycle = PodLifecycle(owner_kind="v1.Pod", owner="ns/a", runs=(PodRun(start_ms=1500),))
    assert encode_lifecycle(lifecycle, fallback_hash=42) == {42: [{"Running": 1}]}


@pytest.mark.parametrize(("key", "entries", "problem"), [
    ("v1.Pod", [], "lifecycle key"),
    (["v1.Pod"], [], "lifecycle key"),
    (["v1.Pod", "ns/a"], [("7", [])], "integer pod hash"),
    (["v1.Pod", "ns/a"], [(7, [{"Finished": [1]}])], "Finished"),
    (["v1.Pod", "ns/a"], [(7, [{"Crashed": 1}])], "Running"),
])
def test_bad_lifecycles_are_refused(key: Any, entries: Any, problem: str) -> None:
    with pytest.raises(TraceFormatError, match=problem):
        decode_lifecycle(key, entries, where="pod_lifecycles entry 0")


def test_stable_hash_is_the_documented_u64() -> None:
    assert stable_hash(None) == int.from_bytes(
        hashlib.blake2b(b"\xc0", digest_size=8).digest(), "big")  # msgpack nil
    assert stable_hash({"a": 1}) == stable_hash({"a": 1})
    assert stable_hash({"a": 1}) != stable_hash({"a": 2})
    assert 0 <= stable_hash({"x": b"\x00"}) < 2**64


def test_index_keeps_the_last_spec_of_every_applied_object() -> None:
    index = IndexBuilder()
    index.add(deployment("web", replicas=1))
    index.add(deployment("web", replicas=3))
    assert index.index == {"apps/v1.Deployment": {
        "shop/web": stable_hash(deployment("web", replicas=3)["spec"])}}
    lifecycle = PodLifecycle(owner_kind="apps/v1.Deployment", owner="shop/web")
    assert index.owner_hash(lifecycle) == index.index["apps/v1.Deployment"]["shop/web"]
    orphan = PodLifecycle(owner_kind="v1.Pod", owner="ns/x")
    assert index.owner_hash(orphan) == stable_hash(["v1.Pod", "ns/x"])
