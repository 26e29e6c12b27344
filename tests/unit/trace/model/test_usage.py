from __future__ import annotations

from typing import Any

import pytest

from simkube.trace import TraceFormatError
from simkube.trace.model.usage import (
    RecordedUsage,
    UsageSample,
    WorkloadUsage,
    sample_problem,
    series_problems,
)
from tests.unit.trace.conftest import web_usage

pytestmark = pytest.mark.unit


def sample(t_ms: int, pods: int = 1, cpu: int = 100, memory: int = 1000) -> UsageSample:
    return UsageSample(t_ms=t_ms, pods=pods, cpu_millicores=cpu, memory_bytes=memory)


def test_a_series_names_its_workload_like_lifecycles_do() -> None:
    usage = web_usage()
    assert usage.workload == "shop/web"
    assert WorkloadUsage(kind="v1.Node", namespace="", name="n", period_ms=1).workload == "n"


def test_step_hold_returns_the_latest_sample_at_or_before_a_time() -> None:
    usage = web_usage()
    assert usage.at(-1) is None
    assert [usage.at(t).t_ms for t in (0, 14_999, 15_000, 44_999, 10**9)] == [  # type: ignore[union-attr]
        0, 0, 15_000, 30_000, 45_000]


def test_scaling_multiplies_the_load_and_keeps_pods() -> None:
    scaled = sample(5, pods=3, cpu=101, memory=1000).scaled(1.5)
    assert (scaled.t_ms, scaled.pods, scaled.cpu_millicores, scaled.memory_bytes) == (
        5, 3, 152, 1500)


@pytest.mark.parametrize(("fields", "problem"), [
    ({"t_ms": -1}, "t_ms is negative"),
    ({"pods": 0}, "pods is 0"),
    ({"cpu_millicores": -5}, "cpu_millicores is negative"),
    ({"memory_bytes": 1.5}, "memory_bytes is a number, not an integer"),
    ({"cpu_millicores": "100m"}, "cpu_millicores is a string, not an integer"),
    ({"pods": True}, "pods is a boolean, not an integer"),
])
def test_samples_refuse_what_a_replay_cannot_play(fields: dict[str, Any], problem: str) -> None:
    values: dict[str, Any] = {"t_ms": 0, "pods": 1, "cpu_millicores": 1, "memory_bytes": 1}
    with pytest.raises(TraceFormatError, match=problem):
        UsageSample(**(values | fields))


def test_series_must_be_in_increasing_time_with_a_positive_period() -> None:
    with pytest.raises(TraceFormatError, match="t_ms 5 is not after the previous sample's 5"):
        WorkloadUsage(kind="v1.Pod", namespace="a", name="b", period_ms=1,
                      samples=(sample(5), sample(5)))
    with pytest.raises(TraceFormatError, match="period_ms must be a positive integer"):
        WorkloadUsage(kind="v1.Pod", namespace="a", name="b", period_ms=0)
    with pytest.raises(TraceFormatError, match="kind must be a non-empty string"):
        WorkloadUsage(kind="", namespace="a", name="b", period_ms=1)


def test_recorded_usage_round_trips_and_checks() -> None:
    usage = web_usage()
    assert RecordedUsage.of(usage).checked() == usage


def test_every_problem_of_a_recorded_series_is_listed_with_its_path() -> None:
    record = RecordedUsage(kind="apps/v1.Deployment", workload="shop/web", period_ms="15s",
                           rows=([0, 1, 1, 1], [10, 1, 1, 1], [5, 1, 1, 1], "x",
                                 [20, 0, 1, 1], [30, 1, 1], [40, 1, -1, 1]))
    assert record.problems() == [
        ("period_ms", "period_ms must be a positive integer, found '15s'"),
        ("samples[2].t_ms", "t_ms 5 is not after the previous sample's 10 (samples are in "
                            "time order)"),
        ("samples[3]", "a sample is [t_ms, pods, cpu_millicores, memory_bytes], found a "
                       "string"),
        ("samples[4].pods", "pods is 0: a sample covers at least one pod"),
        ("samples[5]", "a sample is [t_ms, pods, cpu_millicores, memory_bytes], found a list "
                       "of 3"),
        ("samples[6].cpu_millicores", "cpu_millicores is negative (-1)"),
    ]
    with pytest.raises(TraceFormatError, match=r"usage of apps/v1.Deployment shop/web, "
                       r"period_ms: period_ms must be"):
        record.checked()


def test_problem_helpers_accept_good_values() -> None:
    assert sample_problem([0, 1, 0, 0]) is None
    assert series_problems(kind="v1.Pod", workload="a/b", period_ms=1, rows=[]) == []
    assert series_problems(kind="v1.Pod", workload="a/", period_ms=1, rows=[]) == [
        ("workload", "the workload must be a non-empty 'ns/name' string")]
