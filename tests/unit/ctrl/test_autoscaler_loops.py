"""Reading the autoscaler's loop counters from its Prometheus page: Cluster Autoscaler's,
or the Karpenter build's provisioner passes."""

from __future__ import annotations

import pytest

from simkube.ctrl.autoscaler_loops import (
    AutoscalerMetrics,
    LoopCounts,
    LoopsUnavailableError,
    next_loop_finished,
    parse_loop_counts,
)

pytestmark = pytest.mark.unit

PAGE = """# HELP cluster_autoscaler_function_duration_seconds Time taken by various parts of CA
# TYPE cluster_autoscaler_function_duration_seconds histogram
cluster_autoscaler_function_duration_seconds_bucket{function="main",le="0.01"} 3
cluster_autoscaler_function_duration_seconds_sum{function="main"} 1.5
cluster_autoscaler_function_duration_seconds_count{function="main"} 41
cluster_autoscaler_function_duration_seconds_count{function="loopWait"} 42
cluster_autoscaler_function_duration_seconds_count{function="scaleUp"} 7
cluster_autoscaler_nodes_count{state="ready"} 3
"""


def test_the_two_counters_are_read_and_the_rest_ignored() -> None:
    assert parse_loop_counts(PAGE) == LoopCounts(started=42, finished=41)


def test_the_nodes_ca_added_are_summed_over_their_labels() -> None:
    page = PAGE + ('cluster_autoscaler_scaled_up_nodes_total{gpu_resource_name="",gpu_name="",'
                   'dra_drivers=""} 5\n'
                   'cluster_autoscaler_scaled_up_nodes_total{gpu_resource_name="nvidia.com/gpu",'
                   'gpu_name="a100",dra_drivers=""} 2\n'
                   'cluster_autoscaler_scaled_up_gpu_nodes_total{gpu_name="a100"} 2\n')
    assert parse_loop_counts(page) == LoopCounts(started=42, finished=41, scaled_up=7)
    with pytest.raises(LoopsUnavailableError, match="scaled_up_nodes_total"):
        parse_loop_counts("cluster_autoscaler_scaled_up_nodes_total NaNa\n")


def test_a_fresh_autoscaler_has_counted_nothing() -> None:
    assert parse_loop_counts("cluster_autoscaler_nodes_count 3\n") == LoopCounts(
        started=0, finished=0)


def test_a_loop_after_now_is_the_next_to_start_when_ca_counts_starts() -> None:
    assert LoopCounts(started=42, finished=41).after_now() == 43


def test_without_loop_triggers_the_second_loop_to_finish_is_the_first_after_now() -> None:
    """--frequent-loops-enabled=false: no loopWait, and loop 42 may be running now."""
    page = PAGE.replace('cluster_autoscaler_function_duration_seconds_count{function="loopWait"}'
                        " 42\n", "")
    counts = parse_loop_counts(page)
    assert counts == LoopCounts(started=0, finished=41)
    assert counts.after_now() == 43


KARPENTER_PAGE = """# HELP karpenter_scheduler_scheduling_duration_seconds Duration of scheduling
karpenter_scheduler_scheduling_duration_seconds_count{controller="provisioner"} 90
# TYPE simkube_karpenter_provisioner_passes_total counter
simkube_karpenter_provisioner_passes_total{phase="finished"} 17
simkube_karpenter_provisioner_passes_total{phase="started"} 18
"""


def test_karpenters_passes_are_its_loops() -> None:
    counts = parse_loop_counts(KARPENTER_PAGE)
    assert counts == LoopCounts(started=18, finished=17)
    assert counts.after_now() == 19  # the pass after the one in progress


def test_a_fresh_karpenter_has_counted_nothing() -> None:
    page = KARPENTER_PAGE.replace("} 17", "} 0").replace("} 18", "} 0")
    assert parse_loop_counts(page).after_now() == 2


def test_a_garbled_pass_counter_is_refused() -> None:
    with pytest.raises(LoopsUnavailableError, match="passes_total 'x' is not a number"):
        parse_loop_counts('simkube_karpenter_provisioner_passes_total{phase="started"} x\n')


def test_a_garbled_counter_is_refused() -> None:
    with pytest.raises(LoopsUnavailableError, match="is not a number"):
        parse_loop_counts('cluster_autoscaler_function_duration_seconds_count{function="main"}'
                          " many\n")


async def test_an_unreachable_autoscaler_is_unavailable() -> None:
    metrics = AutoscalerMetrics(url="http://127.0.0.1:9/metrics", timeout=0.2)
    try:
        with pytest.raises(LoopsUnavailableError, match=r"127\.0\.0\.1:9"):
            await metrics.read()
    finally:
        await metrics.close()


class ScriptedLoops:
    """Counters that move on by the script at each read; an exception in it is raised."""

    def __init__(self, *readings: LoopCounts | Exception) -> None:
        self.readings = list(readings)
        self.reads = 0

    async def read(self) -> LoopCounts:
        self.reads += 1
        reading = self.readings.pop(0) if len(self.readings) > 1 else self.readings[0]
        if isinstance(reading, Exception):
            raise reading
        return reading


def counts(finished: int) -> LoopCounts:
    return LoopCounts(started=0, finished=finished)


async def test_the_wait_ends_when_a_loop_started_after_it_has_finished() -> None:
    loops = ScriptedLoops(counts(5), counts(5), counts(6), counts(7))  # 7 = 5 + 2
    assert await next_loop_finished(loops, bound_s=5.0, poll_s=0.0) == counts(7)
    assert loops.reads == 4


async def test_a_restarted_autoscaler_ends_the_wait() -> None:
    loops = ScriptedLoops(counts(5), counts(6), counts(0))
    assert await next_loop_finished(loops, bound_s=5.0, poll_s=0.0)


async def test_the_wait_is_bounded_and_unreadable_counters_end_it() -> None:
    now = [0.0]

    def monotonic() -> float:
        now[0] += 1.0
        return now[0]
    stuck = ScriptedLoops(counts(5))
    assert not await next_loop_finished(stuck, bound_s=3.0, poll_s=0.0, monotonic=monotonic)
    gone = ScriptedLoops(counts(5), LoopsUnavailableError("connection refused"))
    assert not await next_loop_finished(gone, bound_s=5.0, poll_s=0.0)
