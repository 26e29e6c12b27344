from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from simkube.core.errors import ConfigError
from simkube.env.autoscalers.kinds import AutoscalerKind
from simkube.sweep.axes import AxisKind, NodeGroupField
from simkube.sweep.sampling import Method
from simkube.sweep.spec import load_sweep
from tests.unit.sweep.files import BASE, write_sweep

pytestmark = pytest.mark.unit
TIMER_AXIS = {"timer": "clusterAutoscaler.scale-down-unneeded-time", "values": ["1m", 600]}


def test_a_good_file_reads_whole(tmp_path: Path) -> None:
    sweep = load_sweep(write_sweep(tmp_path, axes=[
        TIMER_AXIS, {"caFlag": "--expander", "values": ["least-waste", "price"]},
        {"caFlag": "--scale-down-utilization-threshold", "values": [0.3, 0.5]},
        {"nodeGroups": {"group": "small", "field": "provisioning.delay"}, "values": [30, "2m"]},
        {"autoscaler": ["cluster-autoscaler", "karpenter"]},
        {"traceEdit": "requests", "values": [1, 1.5]}]))
    assert sweep.name == "sw"
    assert sweep.base.trace == tmp_path / "t.sktrace"
    assert (sweep.base.scale.speed, sweep.base.repetitions, sweep.base.seed) == (10, 2, 1)
    assert sweep.base.autoscaler is AutoscalerKind.CLUSTER_AUTOSCALER
    assert [axis.kind for axis in sweep.axes] == [
        AxisKind.TIMER, AxisKind.CA_FLAG, AxisKind.CA_FLAG, AxisKind.NODE_GROUPS,
        AxisKind.AUTOSCALER, AxisKind.TRACE_EDIT]
    assert sweep.axes[0].values == ("1m", "600s")  # a number is seconds of trace time
    assert sweep.axes[2].values == ("0.3", "0.5")
    assert sweep.axes[3].field is NodeGroupField.DELAY
    assert sweep.axes[3].values == ("30s", "2m")
    assert sweep.sampling.method is Method.GRID
    assert len(sweep.digest) == 64


def _error(tmp_path: Path, *, axes: Any = (TIMER_AXIS,), **top: Any) -> str:
    path = write_sweep(tmp_path, axes=list(axes) if isinstance(axes, tuple) else axes, **top)
    with pytest.raises(ConfigError) as caught:
        load_sweep(path)
    prefix = f"{path}: "
    assert caught.value.message.startswith(prefix)
    return caught.value.message.removeprefix(prefix)


@pytest.mark.parametrize(("axis", "message"), [
    ({"knob": "x", "values": [1]}, "axes[0]: an axis is exactly one of timer, caFlag, "
                                   "nodeGroups, autoscaler, traceEdit (found: knob)"),
    ({"timer": "a", "caFlag": "--b", "values": [1]},
     "axes[0]: an axis is exactly one of timer, caFlag, nodeGroups, autoscaler, traceEdit "
     "(found: timer, caFlag)"),
    ("timer", "axes[0] must be a mapping such as {timer: clusterAutoscaler.scan-interval, "
              "values: [10s, 30s]}"),
    ({"timer": "clusterAutoscaler.scan-intervall", "values": ["1s"]},
     "axes[0].timer 'clusterAutoscaler.scan-intervall' is not a timer of the catalogue "
     "(simkube.core.timers) (did you mean 'clusterAutoscaler.scan-interval'?)"),
    ({"timer": "clusterAutoscaler.scan-interval", "values": ["soon"]},
     "axes[0].values[0]: spec.autoscaler.clusterAutoscaler.scan-interval 'soon' is not a "
     "duration; use numbers with units, for example 90s, 15m, 2h, 1h30m or 500ms"),
    ({"timer": "clusterAutoscaler.scan-interval", "values": []},
     "axes[0].values must list at least one value"),
    ({"timer": "clusterAutoscaler.scan-interval"}, "axes[0].values must list at least one value"),
    ({"timer": "clusterAutoscaler.scan-interval", "values": ["1s", "1s"]},
     "axes[0].values has '1s' twice"),
    ({"timer": "clusterAutoscaler.scan-interval", "values": [[1]]},
     "axes[0].values[0] [1] is not a single value"),
    ({"caFlag": "expander", "values": ["price"]},
     "axes[0].caFlag 'expander' must be a flag name such as --expander"),
    ({"caFlag": "--scan-interval", "values": ["1s"]},
     "axes[0].caFlag --scan-interval is a timer sk-ctrl scales for every run"),
    ({"caFlag": "--kubeconfig", "values": ["/x"]}, None),
    ({"nodeGroups": {"group": "small"}, "values": [1]},
     "axes[0].nodeGroups must be {group: ID, field: NAME}"),
    ({"nodeGroups": {"group": "small", "field": "cpu"}, "values": [1]},
     "axes[0].nodeGroups.field 'cpu' is not one of pricePerHour, instanceType, "
     "provisioning.delay, minSize, maxSize"),
    ({"nodeGroups": {"group": "small", "field": "minSize"}, "values": [1.5]},
     "axes[0].values[0] 1.5: minSize must be a whole number, 0 or more"),
    ({"nodeGroups": {"group": "small", "field": "pricePerHour"}, "values": ["cheap"]},
     "axes[0].values[0] (pricePerHour) must be a number, not 'cheap'"),
    ({"autoscaler": ["cluster-autoscaler", "keda"]},
     "axes[0].autoscaler[1] 'keda' is not an autoscaler; known: cluster-autoscaler, karpenter"),
    ({"autoscaler": ["karpenter"], "values": ["karpenter"]},
     "axes[0].values: the autoscaler axis lists its values itself"),
    ({"traceEdit": "limits", "values": [2]},
     "axes[0].traceEdit 'limits' is not one of replicas, requests"),
    ({"traceEdit": "replicas", "values": [0]},
     "axes[0].values[0] (a factor) must be greater than 0"),
])
def test_every_bad_axis_is_one_error_naming_the_field(tmp_path: Path, axis: Any,
                                                      message: str | None) -> None:
    got = _error(tmp_path, axes=[axis])
    if message is None:  # the environment's own refusal, prefixed with the field
        assert got.startswith("axes[0].values[0]: ")
        assert "--kubeconfig" in got
    else:
        assert got == message


@pytest.mark.parametrize(("top", "message"), [
    ({"version": 2}, "version 2 is not 1, the one this skctl reads (add 'version: 1')"),
    ({"axes": []}, "axes must list at least one axis"),
    ({"axes": None}, "axes must list at least one axis"),
    ({"extra": 1}, "unknown field(s) extra; allowed: version, name, base, axes, sampling"),
    ({"name": "Big_Name"}, "name 'Big_Name' must be lowercase letters, digits and '-', at "
                           "most 40 characters"),
    ({"base": {**BASE, "speed": 0}}, None),
    ({"base": {**BASE, "repetitions": 0}},
     "base.repetitions 0 must be a whole number from 1 to 100"),
    ({"base": {**BASE, "seed": "one"}},
     "base.seed 'one' must be a whole number from 0 to 9223372036854775807"),
    ({"base": {**BASE, "trace": "missing.sktrace"}}, None),
    ({"base": {k: v for k, v in BASE.items() if k != "trace"}},
     "base.trace is required: the trace file every point replays"),
    ({"base": {**BASE, "autoscaler": "keda"}},
     "base.autoscaler 'keda' is not one of cluster-autoscaler, karpenter"),
    ({"base": {**BASE, "timers": {"clusterAutoscaler.scan-intervall": "1s"}}}, None),
    ({"base": {**BASE, "timers": {"ca.scan-interval": "1s"}}},
     "base.timers: 'ca.scan-interval' is not SECTION.NAME with SECTION one of "
     "clusterAutoscaler, karpenter, scheduler, controllerManager, metricsServer"),
    ({"base": {**BASE, "colour": "red"}}, "base: unknown field(s) colour; allowed: trace, "
     "speed, duration, seed, repetitions, nodeGroups, autoscaler, timers"),
    ({"axes": [TIMER_AXIS, {**TIMER_AXIS, "values": ["3m"]}]},
     "axes[1] varies clusterAutoscaler.scale-down-unneeded-time again; merge its values into "
     "the first axis"),
    ({"sampling": "sobol"}, "sampling 'sobol' must be 'grid' or {method: random, points: N, "
                            "seed: S}"),
    ({"sampling": {"method": "random"}},
     "sampling.points None must be a whole number, 1 or more"),
    ({"sampling": {"method": "grid", "points": 3}},
     "sampling.points and sampling.seed need method: random"),
    ({"sampling": {"method": "latin"}}, "sampling.method 'latin' is not one of grid, random"),
])
def test_every_bad_top_or_base_field_is_one_error(tmp_path: Path, top: dict[str, Any],
                                                  message: str | None) -> None:
    got = _error(tmp_path, **top)
    if message is None:  # a rule of another module; the field is still named first
        assert got.startswith("base.")
    else:
        assert got == message


def test_an_error_creates_nothing(tmp_path: Path) -> None:
    before = sorted(tmp_path.iterdir()) if tmp_path.exists() else []
    _error(tmp_path, version=3)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["sw.yaml", "t.sktrace"]
    assert before == []
