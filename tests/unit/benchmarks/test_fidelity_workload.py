"""The fidelity workload's timeline: a day, a burst, a final scale-down, and a tail to see it."""

from __future__ import annotations

import pytest

from benchmarks.fidelity_workload import (
    BURST,
    HOURLY,
    NAMESPACE,
    PLACEMENT,
    REPORT_GROUP,
    SERVICES,
    TRUTH_PREFIX,
    cronjob,
    day_seconds,
    deployment,
    schedule,
)
from simkube.cloudprov.config import load_file
from simkube.cloudprov.naming import GROUP_LABEL
from simkube.core.quantities import parse_quantity
from simkube.env.autoscalers.karpenter_catalog import Disruption, node_pool, pool_plans
from simkube.env.services.commands import DEFAULT_NODE_GROUPS

pytestmark = pytest.mark.unit


def test_the_default_run_leaves_twelve_minutes_for_scale_down() -> None:
    assert day_seconds(1200) == 480
    assert day_seconds(180) == pytest.approx(72)  # short runs keep 40 % for the day


def test_steps_are_in_order_and_inside_the_day() -> None:
    steps = schedule(duration_s=1200)
    times = [step.at_s for step in steps]
    assert times == sorted(times)
    assert times[0] == 0
    assert times[-1] == 480  # the final scale-down ends the day
    assert all(step.replicas for step in steps)


def test_replicas_follow_the_curve_and_end_at_the_minimum() -> None:
    steps = schedule(duration_s=1200)
    state: dict[str, int] = {}
    peaks: dict[str, int] = {}
    for step in steps:
        state.update(step.replicas)
        for name, count in state.items():
            peaks[name] = max(peaks.get(name, 0), count)
    assert {s.name: s.low for s in SERVICES} | {BURST.name: 0} == state
    assert {s.name: s.high for s in SERVICES} | {BURST.name: BURST.high} == peaks
    assert max(HOURLY) == 1.0


def test_the_burst_needs_the_large_group_and_outlasts_provisioning() -> None:
    steps = schedule(duration_s=1200)
    started = next(s.at_s for s in steps if s.replicas.get(BURST.name) == BURST.high)
    ended = next(s.at_s for s in steps if s.at_s > started and s.replicas.get(BURST.name) == 0)
    assert ended - started >= 150  # a new node takes 70-85 s with the default node groups
    assert float(BURST.cpu) > 2  # more than a small node has


def test_each_group_gets_pods_of_one_cpu_size_that_memory_never_limits() -> None:
    """Any order of packing fits the same number of pods on a node: no coin toss of the
    autoscaler's decides the truth (the module docstring)."""
    allocatable = {group.id: group.template.allocatable
                   for group in load_file(DEFAULT_NODE_GROUPS).groups.values()}
    for group in {service.group for service in (*SERVICES, BURST)}:
        members = [service for service in (*SERVICES, BURST) if service.group == group]
        assert len({parse_quantity(service.cpu) for service in members}) == 1, members
        per_node = parse_quantity(allocatable[group]["cpu"]) // parse_quantity(members[0].cpu)
        largest = max(parse_quantity(service.memory) for service in members)
        assert per_node * largest <= parse_quantity(allocatable[group]["memory"]), group


def test_pods_target_fake_nodes_only_in_the_recorded_namespace() -> None:
    assert NAMESPACE.startswith(f"{TRUTH_PREFIX}-")
    job = cronjob()
    service = deployment(SERVICES[0])
    for manifest, spec in ((service, service["spec"]["template"]["spec"]),
                           (job, job["spec"]["jobTemplate"]["spec"]["template"]["spec"])):
        assert manifest["metadata"]["namespace"] == NAMESPACE
        assert spec["nodeSelector"] == {"type": "kwok", GROUP_LABEL: "small" if manifest is service
                                        else REPORT_GROUP}
        assert spec["tolerations"] == [{"key": "kwok.x-k8s.io/node", "operator": "Exists",
                                        "effect": "NoSchedule"}]


def test_a_non_positive_duration_is_refused() -> None:
    with pytest.raises(ValueError, match="must be positive"):
        schedule(duration_s=0)


def test_the_pods_fit_the_nodes_of_karpenters_node_pools() -> None:
    """The truth's pods are created by the workload, not sk-driver: their selector and
    tolerations must match what Karpenter's NodePools put on its nodes, or Karpenter would
    launch nothing for them (startup taints excepted: the pods wait for those to go)."""
    config = load_file(DEFAULT_NODE_GROUPS)
    for plan in pool_plans(config):
        pool = node_pool(plan, disruption=Disruption())
        labels = pool["spec"]["template"]["metadata"]["labels"]
        assert PLACEMENT["nodeSelector"].items() <= labels.items()
        for taint in pool["spec"]["template"]["spec"]["taints"]:
            assert any(t["key"] == taint["key"] and t["effect"] == taint["effect"]
                       and t["operator"] == "Exists" for t in PLACEMENT["tolerations"]), taint
