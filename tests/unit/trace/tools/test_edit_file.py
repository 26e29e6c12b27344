from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from simkube.core.errors import ConfigError
from simkube.trace.model.selectors import Match
from simkube.trace.tools import edit_steps
from simkube.trace.tools.edit_file import load_steps, parse_steps
from simkube.trace.tools.edit_steps import (
    NodeSelector,
    ScaleReplicas,
    ScaleResources,
    Select,
    TimeStretch,
    TimeWindow,
    Tolerations,
)

pytestmark = pytest.mark.unit


def test_every_step_kind_parses_in_order(tmp_path: Path) -> None:
    path = tmp_path / "whatif.yaml"
    path.write_text("""
steps:
  - window: {start: 5m, duration: 10m}
  - keep: {namespaces: [dsb]}
  - drop: {kinds: [Pod], selector: "debug=true"}
  - scale-replicas: {factor: 10, kinds: [Deployment]}
  - scale-replicas: {set: 3, selector: "tier=web"}
  - scale-resources: {cpu: 0.5, memory: 2, apply-to: requests}
  - node-selector: {add: {pool: big}, remove: [zone]}
  - tolerations: {add: [{key: spot, operator: Exists}], remove: [old]}
  - time-scale: 0.5
""")
    steps = load_steps(path)
    assert [type(step) for step in steps] == [TimeWindow, Select, Select, ScaleReplicas,
                                              ScaleReplicas, ScaleResources, NodeSelector,
                                              Tolerations, TimeStretch]
    window, keep, drop, times_ten, set_three, resources, *_, scale = steps
    assert isinstance(window, TimeWindow)
    assert window.duration_ms == 600_000
    assert isinstance(keep, Select)
    assert keep.keep
    assert isinstance(drop, Select)
    assert not drop.keep
    assert isinstance(times_ten, ScaleReplicas)
    assert times_ten.factor == 10
    assert isinstance(set_three, ScaleReplicas)
    assert set_three.value == 3
    assert isinstance(resources, ScaleResources)
    assert (resources.requests, resources.limits) == (True, False)
    assert scale == TimeStretch(factor=0.5)


@pytest.mark.parametrize(("raw", "problem"), [
    (None, "non-empty list of steps"),
    ([{"keep": {}, "drop": {}}], "exactly one step name"),
    ([{"teleport": {}}], "unknown step 'teleport'"),
    ([{"keep": {"namespace": ["dsb"]}}], "unknown field.*namespace"),
    ([{"keep": {}}], "needs namespaces, kinds or selector"),
    ([{"window": {"end": "5m", "duration": "1m"}}], "end or duration, not both"),
    ([{"scale-replicas": {"factor": 2, "set": 3}}], "exactly one of factor or set"),
    ([{"scale-replicas": {"set": -1}}], "whole number"),
    ([{"scale-resources": {"apply-to": "all"}}], "requests, limits or both"),
    ([{"node-selector": {"add": ["pool"]}}], "map label keys"),
    ([{"node-selector": {"remove": "zone"}}], "list of label keys"),
    ([{"tolerations": {"add": [{"value": "x"}]}}], "each with a key"),
    ([{"tolerations": {"remove": "x"}}], "list of toleration keys"),
    ([{"time-scale": "fast"}], "must be a number"),
    ([{"keep": "dsb"}], "must be a mapping"),
])
def test_mistakes_name_the_step(raw: Any, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        parse_steps(raw)


def test_time_scale_also_takes_a_mapping() -> None:
    assert parse_steps([{"time-scale": {"factor": 2}}]) == [TimeStretch(factor=2)]


def test_time_stretch_is_the_step_s_name_and_time_scale_still_reads() -> None:
    assert parse_steps([{"time-stretch": 0.5}]) == parse_steps([{"time-scale": 0.5}]) \
        == [TimeStretch(factor=0.5)]


def test_autoscaling_steps_parse() -> None:
    steps = parse_steps([{"hpa": {"name": "shop/web", "cpu-target": 80, "min-replicas": 2}},
                         {"scale-load": {"factor": 1.5, "kinds": ["Deployment"]}},
                         {"drop-usage": None}])
    assert steps == [
        edit_steps.HpaChange(namespace="shop", name="web", cpu_utilization=80, min_replicas=2),
        edit_steps.ScaleLoad(factor=1.5, match=Match(kinds=frozenset({"Deployment"}))),
        edit_steps.DropUsage()]


@pytest.mark.parametrize(("raw", "problem"), [
    ([{"hpa": {"cpu-target": 80}}], r"steps\[0\].hpa needs name"),
    ([{"hpa": {"name": "shop/web", "cpu-target": "80%"}}], "CPU target must be a whole"),
    ([{"scale-load": {"factor": 0}}], r"steps\[0\].scale-load.factor must be greater than 0"),
    ([{"scale-load": {"factor": 2, "pods": 3}}], "unknown field"),
])
def test_autoscaling_step_mistakes(raw: Any, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        parse_steps(raw)
