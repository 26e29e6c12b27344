"""The Simulation ``skctl run`` builds: from flags, from a file, and every refusal."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
import yaml

from simkube.core.errors import ConfigError
from simkube.core.simtime import TimeScale
from simkube.skctl.sim_manifest import (
    RunFlags,
    default_name,
    from_file,
    from_flags,
    timer_warnings,
)

pytestmark = pytest.mark.unit
DATA = Path(__file__).parents[2] / "data" / "simkube"
TRACE = DATA / "cronjob.sktrace"


def test_flags_make_a_full_simulation() -> None:
    simulation = from_flags(RunFlags(
        name="nightly", trace=str(TRACE), speed=TimeScale(10), duration="15m", repetitions=2,
        namespace_prefix="night", node_groups="configmap:sk/groups", reset_node_groups=False,
        startup_delay="2s"))
    assert simulation == {
        "apiVersion": "simkube.dev/v1alpha1", "kind": "Simulation",
        "metadata": {"name": "nightly"},
        "spec": {"trace": {"path": str(TRACE.resolve())}, "speed": 10, "duration": "15m",
                 "repetitions": 2, "namespacePrefix": "night",
                 "nodeGroups": {"config": "configmap:sk/groups", "resetBeforeRun": False},
                 "podTiming": {"startupDelay": "2s"}}}


def test_a_relative_trace_path_becomes_absolute(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(DATA)
    simulation = from_flags(RunFlags(name="x", trace="cronjob.sktrace"))
    assert simulation["spec"]["trace"] == {"path": str(TRACE.resolve())}


def test_urls_and_tracer_windows() -> None:
    by_url = from_flags(RunFlags(name="u", trace="https://example.test/t.sktrace"))
    assert by_url["spec"]["trace"] == {"url": "https://example.test/t.sktrace"}
    window = from_flags(RunFlags(name="w", tracer="127.0.0.1:50051",
                                 start="2026-11-21T10:00:00Z", namespaces=("shop",)))
    assert window["spec"]["trace"] == {"tracer": {
        "address": "127.0.0.1:50051", "start": "2026-11-21T10:00:00Z", "namespaces": ["shop"]}}


def test_default_name_is_a_dns_label_from_the_trace() -> None:
    at = datetime.datetime(2026, 11, 23, 6, 5, 4, tzinfo=datetime.UTC)
    assert default_name("/x/DSB_Scaling.v2.sktrace", now=at) == "dsb-scaling-20261123-060504"
    assert default_name("___", now=at) == "sim-20261123-060504"


@pytest.mark.parametrize(("flags", "message"), [
    (RunFlags(name="x"), "say what to replay"),
    (RunFlags(name="x", trace=str(TRACE), tracer="h:1"), "exclude each other"),
    (RunFlags(name="x", trace=str(TRACE), start="2026-11-21T10:00:00Z"), "window of --tracer"),
    (RunFlags(name="x", trace="/nowhere/t.sktrace"), "does not exist"),
    (RunFlags(name="x", trace=__file__), "is not a trace"),
    (RunFlags(name="Bad_Name", trace=str(TRACE)), "must be a DNS label"),
    (RunFlags(name="x", trace=str(TRACE), duration="soon"), "spec.duration"),
    (RunFlags(name="x", tracer="h:1", start="yesterday"), "spec.trace.tracer.start"),
    (RunFlags(name="x", trace=str(TRACE), namespace_prefix="A"), "spec.namespacePrefix"),
    (RunFlags(name="x", trace=str(TRACE), timers=("scan-interval=1s",)), "SECTION.NAME=VALUE"),
    (RunFlags(name="x", trace=str(TRACE), timers=("kubelet.sync=1s",)), "SECTION.NAME=VALUE"),
    (RunFlags(name="x", trace=str(TRACE), timers=("scheduler.podMaxBackoff=1s",)),
     "spec.scheduler.podMaxBackoff is not a timer"),
    (RunFlags(name="x", trace=str(TRACE), timers=("clusterAutoscaler.scan-interval=x",)),
     "spec.autoscaler.clusterAutoscaler.scan-interval 'x' is not a duration"),
])
def test_bad_flags_are_refused_before_anything_is_created(flags: RunFlags, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        from_flags(flags)


def test_a_file_is_read_checked_and_renamed(tmp_path: Path) -> None:
    path = tmp_path / "sim.yaml"
    path.write_text(yaml.safe_dump({
        "apiVersion": "simkube.dev/v1alpha1", "kind": "Simulation",
        "metadata": {"name": "from-file"},
        "spec": {"trace": {"path": str(TRACE)}, "speed": 5}}))
    assert from_file(path, name=None)["metadata"]["name"] == "from-file"
    assert from_file(path, name="renamed")["metadata"]["name"] == "renamed"


@pytest.mark.parametrize(("text", "message"), [
    ("[1, 2]", "must hold one Simulation"),
    ("kind: Deployment\napiVersion: apps/v1\n", "expected simkube.dev/v1alpha1 Simulation"),
    ("apiVersion: simkube.dev/v1alpha1\nkind: Simulation\nspec: {trace: {path: /t}}\n",
     "no metadata.name"),
    ("apiVersion: simkube.dev/v1alpha1\nkind: Simulation\nmetadata: {name: a}\n"
     "spec: {trace: {path: t.sktrace}}\n", "must be absolute"),
    ("a: [", "is not YAML"),
])
def test_bad_files_are_refused(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "sim.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        from_file(path, name=None)


def test_a_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        from_file(tmp_path / "absent.yaml", name=None)


def test_timers_and_seed_go_to_their_sections_and_floors_are_named() -> None:
    simulation = from_flags(RunFlags(
        name="t", trace=str(TRACE), speed=TimeScale(30), seed=3,
        timers=("clusterAutoscaler.scan-interval=15s", "scheduler.podMaxBackoffSeconds=60",
                "controllerManager.horizontal-pod-autoscaler-sync-period=30s",
                "clusterAutoscaler.max-graceful-termination-sec=10")))
    spec = simulation["spec"]
    assert spec["seed"] == 3
    assert spec["autoscaler"] == {"clusterAutoscaler": {
        "scan-interval": "15s", "max-graceful-termination-sec": "10"}}
    assert spec["scheduler"] == {"podMaxBackoffSeconds": "60"}
    assert spec["controllerManager"] == {"horizontal-pod-autoscaler-sync-period": "30s"}
    # the scheduler's backoffs keep the run's clock, so only CA's whole-second floor shows
    assert timer_warnings(simulation) == [
        "at speed 30, clusterAutoscaler.max-graceful-termination-sec 10.0s is 30.0s of trace "
        "time (clusterAutoscaler takes whole seconds, at least 1.0s of wall time)"]
    slow = RunFlags(name="t", trace=str(TRACE), speed=TimeScale(2))
    assert timer_warnings(from_flags(slow)) == []


def test_hold_flags_go_to_the_clock_section_and_are_checked() -> None:
    simulation = from_flags(RunFlags(name="t", trace=str(TRACE), hold=False, max_hold="1s"))
    assert simulation["spec"]["clock"] == {"holdForAutoscaler": False, "maxHold": "1s"}
    assert "clock" not in from_flags(RunFlags(name="t", trace=str(TRACE)))["spec"]
    with pytest.raises(ConfigError, match=r"spec\.clock\.maxHold"):
        from_flags(RunFlags(name="t", trace=str(TRACE), max_hold="5m"))


def test_the_hpa_flag_sets_spec_hpa() -> None:
    simulation = from_flags(RunFlags(name="x", trace=str(TRACE), hpa="removed"))
    assert simulation["spec"]["hpa"] == "removed"
    assert "hpa" not in from_flags(RunFlags(name="x", trace=str(TRACE)))["spec"]
