from __future__ import annotations

import pytest

from simkube.core.errors import ConfigError
from simkube.trace.model.selectors import Match
from simkube.trace.tools import edit_steps
from simkube.trace.tools.edit_options import EditOptions, steps_from_options
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


def test_flags_become_steps_in_the_documented_order() -> None:
    steps = steps_from_options(EditOptions(
        time_stretch=2, add_toleration=("spot",), add_node_selector=("pool=big",),
        cpu_factor=0.5, replicas_factor=10, drop_kinds=("Pod",), namespaces=("dsb",),
        kinds=("Deployment",), duration="10m", target_kinds=("Deployment",)))
    assert [type(step) for step in steps] == [TimeWindow, Select, Select, Select,
                                              ScaleReplicas, ScaleResources, NodeSelector,
                                              Tolerations, TimeStretch]
    replicas = steps[4]
    assert isinstance(replicas, ScaleReplicas)
    assert replicas.match.kinds == frozenset({"Deployment"})
    resources = steps[5]
    assert isinstance(resources, ScaleResources)
    assert (resources.cpu, resources.memory) == (0.5, 1.0)


def test_no_flags_no_steps() -> None:
    assert steps_from_options(EditOptions()) == []


@pytest.mark.parametrize(("options", "problem"), [
    (EditOptions(end="5m", duration="1m"), "--end or --duration"),
    (EditOptions(replicas=2, replicas_factor=2), "--replicas-factor or --replicas"),
    (EditOptions(add_node_selector=("pool",)), "key=value"),
    (EditOptions(selector="=x"), "selector"),
])
def test_contradictions_are_refused(options: EditOptions, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        steps_from_options(options)


def test_autoscaling_flags_become_an_hpa_change_a_load_factor_and_a_drop() -> None:
    steps = steps_from_options(EditOptions(hpa="shop/web", hpa_cpu_target=80,
                                           hpa_max_replicas=20, load_factor=2.0,
                                           drop_usage=True, target_namespaces=("shop",)))
    assert steps == [
        edit_steps.HpaChange(namespace="shop", name="web", cpu_utilization=80,
                             max_replicas=20),
        edit_steps.ScaleLoad(factor=2.0, match=Match(namespaces=frozenset({"shop"}))),
        edit_steps.DropUsage(match=Match(namespaces=frozenset({"shop"})))]


@pytest.mark.parametrize(("options", "problem"), [
    (EditOptions(hpa_cpu_target=80), "need --hpa NAMESPACE/NAME"),
    (EditOptions(hpa="web", hpa_cpu_target=80), "'web' is not namespace/name"),
    (EditOptions(hpa="shop/web"), "changes nothing"),
])
def test_hpa_flag_mistakes(options: EditOptions, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        steps_from_options(options)
