"""Fuzz family for object bodies: well-formed traces whose objects hold the wrong JSON types.

The readers' fuzzing (``test_fuzz_readers``) breaks the framing; this family keeps every
trace well-formed and instead puts a wrong type (a list, a map, a string, a negative or huge
number, a boolean, null) at random field paths of real sample objects, including fields the
tools interpret but the object did not have. Every trace command then runs on the result as
a user would: ``info``, ``validate``, ``fix --auto``, ``edit`` (every object step, a window,
a time scale, a load factor, and an HPA's target and bounds on an HPA among the objects),
``convert`` to each format, and the driver's rewriting of every object. Each must finish or
refuse with ``TraceFormatError`` (the HPA step may also refuse with ``ConfigError`` when the
input holds no such HPA); anything else is a bug.

Modes and seeds work as in ``test_fuzz_readers`` (``fuzzing.py``): ``make test`` runs the
fixed corpus and the regressions; ``make fuzz`` searches random seeds.
"""

from __future__ import annotations

import copy
import functools
import json
import random
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack
import pytest
from click.testing import CliRunner

from simkube.core.errors import ConfigError
from simkube.driver.options import Placement, PodTiming
from simkube.driver.rewriting import Rewriter, RootRef
from simkube.skctl.trace_commands import trace_group
from simkube.trace import (
    KubeObject,
    ObjectRef,
    TraceFormat,
    TraceFormatError,
    open_trace,
    open_trace_bytes,
    read_trace,
)
from simkube.trace.model.source import TraceSource, load
from simkube.trace.tools.convert import write_converted
from simkube.trace.tools.edit import apply_edits
from simkube.trace.tools.edit_steps import (
    HpaChange,
    NodeSelector,
    ScaleLoad,
    ScaleReplicas,
    ScaleResources,
    TimePoint,
    TimeStretch,
    TimeWindow,
    Tolerations,
)
from simkube.trace.tools.fixes import apply_fixes, choose_fixes
from simkube.trace.tools.info import summarise
from simkube.trace.tools.stream import stream_of
from simkube.trace.tools.validate import validate
from tests.unit.trace.conftest import SAMPLE_NAMES, SAMPLES, deployment, pod
from tests.unit.trace.fuzzing import (
    Family,
    Regression,
    assert_no_bug,
    chosen_seed,
    search_seconds,
)

pytestmark = pytest.mark.unit
INPUTS_PER_SEED = 100  # each input runs a dozen commands: about 1 s a seed here
CLI_SHARE = 0.05  # inputs also run through skctl's commands (slower, and what users see)
CORPUS = (1, 2, 3, 4, 5, 6, 7, 8)
REGRESSIONS: dict[int, Regression] = {}

WRONG_VALUES: tuple[Any, ...] = (
    None, True, False, "", "x", "80", "1Gi", -1, 0, -(2**31), 2**63 - 1, -(2**63), 1.5, -0.5,
    1e300, [], [80], [[80]], ["a", "b"], {}, {"a": 1}, {"containerPort": 80}, [{}], [None],
)
# Fields the tools and the driver interpret: planted where an object has a map, so a wrong
# type also reaches code that only looks when the field is present.
INTERPRETED = (
    "spec", "template", "metadata", "labels", "annotations", "containers", "initContainers",
    "ports", "containerPort", "protocol", "resources", "requests", "limits", "cpu", "memory",
    "env", "envFrom", "valueFrom", "configMapKeyRef", "secretKeyRef", "configMapRef",
    "secretRef", "volumes", "volumeMounts", "configMap", "secret", "persistentVolumeClaim",
    "projected", "sources", "name", "optional", "replicas", "jobTemplate", "selector",
    "nodeSelector", "tolerations", "taints", "nodeName", "ownerReferences", "status",
    "capacity", "allocatable", "priority", "priorityClassName", "overhead", "runtimeClassName",
    "serviceAccountName", "serviceAccount", "clusterIP", "clusterIPs", "volumeName",
    "metrics", "minReplicas", "maxReplicas", "target", "averageUtilization", "type",
)
TRACKED = {
    "apps/v1.Deployment": ["/spec/template"], "batch/v1.CronJob":
    ["/spec/jobTemplate/spec/template"], "batch/v1.Job": ["/spec/template"], "v1.Pod": [""],
}
HPA = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
       "metadata": {"name": "hpa", "namespace": "b"},
       "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "w"},
                "minReplicas": 1, "maxReplicas": 9, "metrics": [
                    {"type": "Resource", "resource": {"name": "cpu", "target": {
                        "type": "Utilization", "averageUtilization": 50}}}]}}
# The HPA step names the one HPA above: on any other input (or one whose mutation left no HPA
# or no CPU metric) it refuses with ConfigError, which is its documented answer.
HPA_STEP = HpaChange(namespace="b", name="hpa", cpu_utilization=80, min_replicas=2,
                     max_replicas=12)
ROOT = RootRef(name="sim-root", uid="0f0f0f0f-0000-0000-0000-000000000001")


def _extra_objects() -> list[KubeObject]:
    volumes = [{"name": "cfg", "configMap": {"name": "settings"}},
               {"name": "proj", "projected": {"sources": [{"secret": {"name": "token"}}]}},
               {"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    container = {"name": "app", "image": "app:1", "ports": [{"containerPort": 80}],
                 "env": [{"name": "A", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}],
                 "envFrom": [{"configMapRef": {"name": "env"}}],
                 "volumeMounts": [{"name": "cfg", "mountPath": "/cfg"}],
                 "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}
    rich = deployment("rich", volumes=volumes, serviceAccountName="robot",
                      priorityClassName="high", tolerations=[{"key": "k", "operator": "Exists"}],
                      nodeSelector={"zone": "a"}, initContainers=[container])
    job_spec = {"template": {"metadata": {"labels": {"job-name": "j"}},
                             "spec": {"containers": [container], "restartPolicy": "Never"}}}
    return [
        rich, pod("solo", nodeName="n1", runtimeClassName="gvisor", overhead={"cpu": "10m"}),
        {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "b"},
         "spec": {"selector": {"matchLabels": {"a": "b"}}, **job_spec}},
        {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c", "namespace": "b"},
         "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": job_spec}}},
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"a": "b"}},
         "spec": {"taints": [{"key": "t", "effect": "NoSchedule"}]},
         "status": {"capacity": {"cpu": "4"}, "allocatable": {"cpu": "4"}}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "b"},
         "spec": {"clusterIP": "10.0.0.1", "ports": [{"port": 80, "nodePort": 30080}]}},
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
         "metadata": {"name": "data", "namespace": "b"}, "spec": {"volumeName": "pv-1"}},
        HPA,
    ]


@functools.cache
def sample_objects() -> tuple[str, ...]:
    """Every distinct object of the sample traces and a few richer ones, as JSON text."""
    found: dict[str, None] = {}
    for name in SAMPLE_NAMES:
        trace = read_trace(SAMPLES / name)
        for obj in [*trace.initial_state, *(o for e in trace.events for o in e.applied)]:
            found[json.dumps(obj, sort_keys=True)] = None
    for obj in _extra_objects():
        found[json.dumps(obj, sort_keys=True)] = None
    return tuple(found)


def _containers(obj: Any) -> Iterator[tuple[Any, Any]]:
    """Every (container, key) pair of a nested value: the places a substitution can go."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield obj, key
            yield from _containers(value)
    elif isinstance(obj, list):
        for index, value in enumerate(obj):
            yield obj, index
            yield from _containers(value)


def substitute(obj: KubeObject, rng: random.Random) -> None:
    """Replace one field (existing, or an interpreted one planted in a map) with a wrong type."""
    places = list(_containers(obj))
    parent, key = rng.choice(places)
    if isinstance(parent, dict) and rng.random() < 0.3:
        key = rng.choice(INTERPRETED)
    value = copy.deepcopy(rng.choice(WRONG_VALUES))
    if isinstance(parent, dict) or isinstance(key, int):
        parent[key] = value


@dataclass(frozen=True)
class Input:
    suffix: str  # the trace's format, as its file name says
    data: bytes
    through_cli: bool  # also run the skctl commands on it, as a user types them


def inputs(seed: int) -> Iterator[Input]:
    """One sample object with one to three fields of the wrong type, in a trace."""
    rng = random.Random(seed)  # noqa: S311  # reproducible fuzzing, not secrets
    pool = sample_objects()
    while True:
        obj = json.loads(rng.choice(pool))
        for _ in range(rng.randint(1, 3)):
            substitute(obj, rng)
        suffix, data = _trace(obj, as_json=rng.random() < 0.3)
        yield Input(suffix, data, through_cli=rng.random() < CLI_SHARE)


def _trace(obj: KubeObject, *, as_json: bool) -> tuple[str, bytes]:
    config = {"trackedObjects": {key: {"podSpecTemplatePaths": paths}
                                 for key, paths in TRACKED.items()}}
    document = {"version": 2, "config": config, "index": {}, "pod_lifecycles": {},
                "events": [{"ts": 1_700_000_000, "applied_objs": [obj], "deleted_objs": []},
                           {"ts": 1_700_000_060, "applied_objs": [], "deleted_objs": [obj]}]}
    if as_json:  # JSON holds what msgpack cannot (integers beyond 64 bits)
        return "json", json.dumps(document).encode()
    return "sktrace", msgpack.packb(document, use_bin_type=True)


def run_every_command(data: Input) -> None:
    """What a user would run on the trace, and what the driver does with its objects."""
    if data.through_cli:
        _run_the_cli(data)
    source = open_trace_bytes(data.data, name=f"fuzz.{data.suffix}")
    load(source)
    summarise(source)
    findings = validate(source)
    fixed = apply_fixes(source, findings, choose_fixes(findings, requested={}, auto=True))
    _drain_and_convert(fixed, source)
    steps = [ScaleReplicas(factor=2.5), ScaleResources(cpu=1.5, memory=0.5),
             NodeSelector(add=(("pool", "big"),), remove=frozenset({"zone"})),
             Tolerations(add=((("key", "t"), ("operator", "Exists")),), remove=frozenset({"k"})),
             TimeWindow(start=TimePoint(offset_ms=30_000)), TimeStretch(factor=0.5),
             ScaleLoad(factor=2.0), HPA_STEP]
    with tempfile.TemporaryDirectory() as scratch:
        for step in steps:  # written as edit writes them; converting is covered above
            try:
                write_converted(apply_edits(source, [step]), source, Path(scratch) / "e.trace")
            except ConfigError:
                if step is not HPA_STEP:
                    raise
    rewriter = Rewriter(simulation="fuzz", prefix="sim", root=ROOT, header=source.header,
                        placement=Placement(), timing=PodTiming(startup_delay_ms=1000,
                                                                startup_jitter_ms=500),
                        lifecycle_owners=frozenset({"v1.Pod shop/solo"}))
    for event in source.events():
        for obj in event.applied:
            ref = ObjectRef.of(obj)
            rewriter.target(ref, namespaced=bool(ref.namespace))
            rewriter.rewrite(obj, namespaced=bool(ref.namespace))


def _drain_and_convert(stream: Any, source: TraceSource) -> None:
    """Write ``stream`` natively (what ``edit`` does), then convert that file to each format."""
    with tempfile.TemporaryDirectory() as scratch:
        written = Path(scratch) / "edited.trace"
        write_converted(stream, source, written)
        edited = open_trace(written)
        for trace_format in TraceFormat:
            out = Path(scratch) / f"out.{trace_format.value}"
            write_converted(stream_of(edited), edited, out, trace_format=trace_format)


# What each command may answer: done, warnings, errors found, or the trace refused (5).
CLI_EXITS = frozenset({0, 1, 2, 5})
CLI_COMMANDS = (["info", "--json"], ["validate", "--json"], ["fix", "--auto", "{out}.trace"],
                ["edit", "--replicas-factor", "2", "--cpu-factor", "1.5",
                 "--add-toleration", "k=v:NoSchedule", "--remove-node-selector", "zone",
                 "{out}.trace"],
                ["convert", "{out}.json"], ["convert", "{out}.sktrace"])


def _run_the_cli(data: Input) -> None:
    """The commands through click, as typed: an exception (a traceback) fails the input."""
    with tempfile.TemporaryDirectory() as scratch:
        trace = Path(scratch) / f"in.{data.suffix}"
        trace.write_bytes(data.data)
        for command in CLI_COMMANDS:
            args = [arg.format(out=Path(scratch) / "out") for arg in command]
            result = CliRunner().invoke(trace_group, [args[0], str(trace), *args[1:]])
            if result.exception is not None and not isinstance(result.exception, SystemExit):
                raise result.exception
            if result.exit_code not in CLI_EXITS:
                raise AssertionError(f"skctl trace {' '.join(command)} exited "
                                     f"{result.exit_code}: {result.output[-300:]}")


def describe(data: Input) -> str:
    cli = ", through the CLI" if data.through_cli else ""
    return f"a {data.suffix} trace of {len(data.data)} bytes{cli}"


FAMILY = Family(inputs=inputs, check=run_every_command, describe=describe,
                inputs_per_seed=INPUTS_PER_SEED)


@pytest.mark.parametrize("seed", CORPUS)
def test_corpus_seed(seed: int) -> None:
    assert_no_bug(FAMILY.first_bug(seed))


if REGRESSIONS:  # a parametrisation over nothing would be reported as skipped
    @pytest.mark.parametrize("seed", sorted(REGRESSIONS))
    def test_regression_seed(seed: int) -> None:
        index = REGRESSIONS[seed].input
        assert_no_bug(FAMILY.first_bug(seed, index, index + 1),
                      previously=REGRESSIONS[seed].found)


@pytest.mark.parametrize(("path", "value", "message"), [
    (("spec", "template", "metadata", "labels"), 7, "is an integer, not a map"),
    (("spec", "template", "spec", "containers", 0, "resources", "requests", "cpu"), [[80]],
     "is a list, not a resource quantity"),
    (("spec", "template", "spec", "tolerations"), {"key": "k"}, "is a map, not a list"),
])
def test_what_the_family_found_first(tmp_path: Path, path: tuple[str | int, ...], value: Any,
                                     message: str) -> None:
    """Its first findings (corpus seeds 1, 2 and 4), as plain cases: validate names the field
    and exits 2; edit refuses, naming object and field (exit 5); the driver does the same."""
    obj = deployment("web", namespace="shop")
    parent: Any = obj
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    dotted = ".".join(f"[{key}]" if isinstance(key, int) else key for key in path)
    dotted = dotted.replace(".[", "[")
    suffix, data = _trace(obj, as_json=False)
    trace = tmp_path / f"in.{suffix}"
    trace.write_bytes(data)
    found = CliRunner().invoke(trace_group, ["validate", "--json", str(trace)])
    assert found.exit_code == 2, found.output
    wrong = [f for f in json.loads(found.output)["findings"] if f["code"] == "wrong-type"]
    assert [(f["object"], f["path"]) for f in wrong] == [("apps/v1.Deployment shop/web",
                                                         dotted)]
    assert message in wrong[0]["message"]
    edited = CliRunner().invoke(trace_group, ["edit", str(trace), str(tmp_path / "out.trace"),
                                              "--cpu-factor", "2", "--add-toleration", "k"])
    if "labels" in path:  # edits leave a template's labels alone
        assert edited.exit_code == 0, edited.output
    else:
        assert isinstance(edited.exception, TraceFormatError)
        assert f"apps/v1.Deployment shop/web: {dotted} {message}" in str(edited.exception)
        assert not (tmp_path / "out.trace").exists()
    if "resources" not in path:  # the driver passes resources through untouched
        rewriter = Rewriter(simulation="s", prefix="sim", root=ROOT, header=read_trace(
            trace).header, placement=Placement(), timing=PodTiming())
        with pytest.raises(TraceFormatError, match=rf"{re.escape(dotted)} {message}"):
            rewriter.rewrite(obj, namespaced=True)


def test_the_unmutated_samples_pass_every_command() -> None:
    for text in sample_objects():
        run_every_command(Input(*_trace(json.loads(text), as_json=False), through_cli=True))


# The opt-in modes are defined only when asked for: a skipped test fails the run.
if (SEED := chosen_seed()) is not None:
    def test_chosen_seed() -> None:
        assert_no_bug(FAMILY.first_bug(SEED))

if (SECONDS := search_seconds()) is not None:
    def test_random_seeds_until_time_is_up() -> None:
        FAMILY.search(SECONDS or 0.0)
