"""The loop breakdown's arithmetic: per-loop means and bucket quantiles from two scrapes."""

from __future__ import annotations

import pytest

from benchmarks.loop_metrics import Samples, front, functions, rpcs

pytestmark = pytest.mark.unit
HISTOGRAM = "cluster_autoscaler_function_duration_seconds"


def _ca(loops: float, main_seconds: float, state_seconds: float,
        buckets: dict[str, float]) -> Samples:
    samples: Samples = {
        (f"{HISTOGRAM}_count", "main", "", ""): loops,
        (f"{HISTOGRAM}_sum", "main", "", ""): main_seconds,
        (f"{HISTOGRAM}_count", "updateClusterState", "", ""): loops,
        (f"{HISTOGRAM}_sum", "updateClusterState", "", ""): state_seconds,
        (f"{HISTOGRAM}_count", "scaleUp", "", ""): 0.0,
        (f"{HISTOGRAM}_sum", "scaleUp", "", ""): 0.0,
    }
    for bound, count in buckets.items():
        samples[(f"{HISTOGRAM}_bucket", "main", "", bound)] = count
    return samples


def test_functions_are_per_loop_over_the_window_only() -> None:
    before = _ca(10, 30.0, 20.0, {"0.5": 2, "1.0": 5, "5.0": 10, "+Inf": 10})
    after = _ca(20, 40.0, 25.0, {"0.5": 6, "1.0": 14, "5.0": 20, "+Inf": 20})
    figure = functions(before, after, nodes=1000, provider="sk-cloudprov")
    assert figure["loops"] == 10
    assert figure["seconds_per_loop"] == {"main": 1.0, "updateClusterState": 0.5}
    assert figure["main_p50_le"] == 1.0  # 9 of the window's 10 loops within 1 s
    assert figure["main_p90_le"] == 1.0
    assert "scaleUp" not in figure["seconds_per_loop"]  # not run in the window


def test_rpcs_add_every_status_code_of_a_method() -> None:
    before: Samples = {("grpc_server_handled_total", "NodeGroupForNode", "OK", ""): 100.0,
                       ("grpc_server_handling_seconds_sum", "NodeGroupForNode", "", ""): 0.1}
    after: Samples = {("grpc_server_handled_total", "NodeGroupForNode", "OK", ""): 2100.0,
                      ("grpc_server_handled_total", "NodeGroupForNode", "INTERNAL", ""): 0.0,
                      ("grpc_server_handled_total", "NodeGroupGetOptions", "OK", ""): 4000.0,
                      ("grpc_server_handling_seconds_sum", "NodeGroupForNode", "", ""): 0.3,
                      ("grpc_server_handling_seconds_sum", "NodeGroupGetOptions", "", ""): 0.4}
    figure = rpcs(before, after, loops=2, nodes=1000)
    assert figure["calls_per_loop"] == {"NodeGroupForNode": 1000.0, "NodeGroupGetOptions": 2000.0}
    assert figure["server_ms_mean"] == {"NodeGroupForNode": 0.1, "NodeGroupGetOptions": 0.1}


def test_the_fronts_answers_are_per_loop_and_per_method() -> None:
    prefix = "sk_cloudprov_front"
    before: Samples = {(f"{prefix}_cache_hits_total", "NodeGroupForNode", "", ""): 500.0}
    after: Samples = {
        (f"{prefix}_cache_hits_total", "NodeGroupForNode", "", ""): 2500.0,
        (f"{prefix}_cache_hits_total", "NodeGroupGetOptions", "", ""): 4000.0,
        (f"{prefix}_forwards_total", "NodeGroupForNode", "OK", ""): 2.0,
        (f"{prefix}_forwards_total", "NodeGroupTargetSize", "OK", ""): 18.0,
        (f"{prefix}_forwards_total", "NodeGroupTargetSize", "NotFound", ""): 2.0,
        (f"{prefix}_upstream_seconds_sum", "NodeGroupTargetSize", "", ""): 0.02,
        (f"{prefix}_upstream_seconds_sum", "NodeGroupForNode", "", ""): 0.002}
    figure = front(before, after, loops=2, nodes=1000)
    assert figure["hits_per_loop"] == {"NodeGroupForNode": 1000.0, "NodeGroupGetOptions": 2000.0}
    assert figure["forwards_per_loop"] == {"NodeGroupForNode": 1.0, "NodeGroupTargetSize": 10.0}
    assert figure["upstream_ms_mean"] == {"NodeGroupForNode": 1.0, "NodeGroupTargetSize": 1.0}
