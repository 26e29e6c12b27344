"""The recorder against a fake API: a Karpenter run, a Cluster Autoscaler run (no NodeClaim
kind at all) and a restarted recorder, from the watches to scaling.csv and summary.json; the
timeline following watch events in trace time, and its heartbeat."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest

from simkube.core.kubeapi import KubeClient
from simkube.core.simtime import TimeScale
from simkube.results import Recorder, load_run
from simkube.results.model import RunResults
from tests.support.fake_api import FakeApi
from tests.unit.results.karpenter_objects import (
    launched,
    node,
    node_name,
    nodeclaim,
    terminating,
)
from tests.unit.results.objects import ca_event, pod

pytestmark = pytest.mark.unit
START = datetime(2026, 11, 25, 7, 0, 5, tzinfo=UTC)
NODES, EVENTS, PODS = "/api/v1/nodes", "/api/v1/events", "/api/v1/pods"
NODECLAIMS = "/apis/karpenter.sh/v1/nodeclaims"
PRICES = {"small": 0.096, "large": 0.384}


class Run:
    """One recorder on a fake API, its trace clock moved by hand."""

    def __init__(self, tmp_path: Path, api: FakeApi) -> None:
        self.api = api
        self.trace = 0.0
        self.recorder = Recorder(
            kube=cast(KubeClient, api), run_dir=tmp_path / "sim" / "run-1", simulation="sim",
            run=1, namespace_prefix="virtual", groups=PRICES, trace_clock=lambda: self.trace,
            scale=TimeScale(10.0), interval=3600.0, now=lambda: START)

    async def at(self, trace: float, *sent: tuple[str, str, dict[str, Any]]) -> None:
        self.trace = trace
        for path, kind, obj in sent:
            self.api.send(path, kind, obj)
        await self.api.settle()
        self.recorder.sample()

    async def finish(self) -> RunResults:
        await self.recorder.stop()
        return load_run(self.recorder.run_dir)


def approx(value: float) -> Any:
    return pytest.approx(value, abs=1e-6)  # summary.json keeps six decimals


def announced(results: RunResults) -> list[tuple[float, str, int, int, str]]:
    return [(row.trace_s, row.group, row.delta, row.nodes_after, row.reason)
            for row in results.scaling if row.source == "autoscaler"]


async def test_a_karpenter_run(tmp_path: Path) -> None:
    old = nodeclaim("simkube-old", launched_at="2026-11-25T06:59:00Z")
    run = Run(tmp_path, FakeApi(lists={NODES: [node("simkube-old")], NODECLAIMS: [old],
                                       EVENTS: [launched("simkube-old",
                                                         last="2026-11-25T06:59:00Z")]}))
    await run.recorder.start()
    await run.at(10, (NODECLAIMS, "ADDED", nodeclaim("simkube-a", group=None)),
                 (NODECLAIMS, "MODIFIED", nodeclaim("simkube-a",
                                                    launched_at="2026-11-25T07:00:06Z")),
                 (EVENTS, "ADDED", launched("simkube-a")))
    await run.at(70, (NODES, "ADDED", node("simkube-a")))
    await run.at(80, (EVENTS, "ADDED", launched("simkube-b")))  # its NodeClaim unseen
    await run.at(140, (NODES, "ADDED", node("simkube-b", group="small",
                                            instance_type="m5.large")))
    gone = nodeclaim("simkube-old", launched_at="2026-11-25T06:59:00Z",
                     deleted_at="2026-11-25T07:01:00Z", disruption="Empty")
    await run.at(200, (NODECLAIMS, "MODIFIED", gone),
                 (EVENTS, "ADDED", terminating(node_name("simkube-old"), "Empty")),
                 (NODES, "DELETED", node("simkube-old")), (NODECLAIMS, "DELETED", gone))
    results = await run.finish()
    assert announced(results) == [(10, "large", 1, 2, "Launched"),
                                  (80, "small", 1, 1, "Launched"),
                                  (200, "large", -1, 1, "Empty")]
    summary = results.summary
    assert summary.autoscaler == "karpenter"
    assert summary.disruptions == {"Empty": 1}
    assert (summary.groups["large"].instance_type, summary.groups["large"].node_pool) == (
        "m5.2xlarge", "simkube")
    # large: 1 node for 200 s, 2 from 70 s to 200 s; small: 1 from 140 s (of trace).
    assert summary.instance_types == {
        "m5.2xlarge": {"node_hours": approx(330 / 3600), "cost_usd": approx(330 / 3600 * 0.384)},
        "m5.large": {"node_hours": approx(60 / 3600), "cost_usd": approx(60 / 3600 * 0.096)}}
    assert set(summary.node_pools) == {"simkube"}
    assert summary.node_pools["simkube"]["cost_usd"] == pytest.approx(summary.cost_usd)


def cloudprov_node(name: str, group: str = "small") -> dict[str, Any]:
    return {"metadata": {"name": name, "uid": name, "resourceVersion": "1",
                         "labels": {"simkube.dev/node-group": group,
                                    "simkube.dev/node-group-namespace": "sk-cloudprov",
                                    "node.kubernetes.io/instance-type": "m5.large",
                                    "kubernetes.io/hostname": name},
                         "annotations": {"kwok.x-k8s.io/node": "fake"}},
            "spec": {"providerID": f"simkube://{name}"}}


async def test_a_cluster_autoscaler_run_without_the_nodeclaim_kind(tmp_path: Path) -> None:
    api = FakeApi(lists={NODES: [cloudprov_node("small-1")]}, absent=(NODECLAIMS,))
    run = Run(tmp_path, api)
    await run.recorder.start()
    await run.at(10, (EVENTS, "ADDED", ca_event("u1", reason="TriggeredScaleUp",
                                                 message="{small 1->2 (max: 20)}",
                                                 last="2026-11-25T07:00:06Z")))
    await run.at(70, (NODES, "ADDED", cloudprov_node("small-2")))
    await run.at(700, (EVENTS, "ADDED", ca_event("d1", reason="ScaleDownEmpty",
                                                  message='Scale-down: removing empty node '
                                                  '"small-2"', last="2026-11-25T07:01:15Z")),
                 (NODES, "DELETED", cloudprov_node("small-2")))
    results = await run.finish()
    assert ("GET", NODECLAIMS) in api.requests
    assert announced(results) == [(10, "small", 1, 2, "TriggeredScaleUp"),
                                  (700, "small", -1, 1, "ScaleDownEmpty")]
    summary = results.summary
    assert summary.autoscaler == "cluster-autoscaler"
    assert summary.disruptions == {"Empty": 1}
    assert summary.groups["small"].node_pool == ""
    assert set(summary.node_pools) == {"small"}  # a CA group is its own pool
    assert set(summary.instance_types) == {"m5.large"}


async def test_no_autoscaler_and_a_restarted_recorder(tmp_path: Path) -> None:
    static = {"metadata": {"name": "static-1", "labels": {
        "node.kubernetes.io/instance-type": "kwok-32c-256g"},
        "annotations": {"kwok.x-k8s.io/node": "fake"}}, "spec": {"providerID": "kwok://s"}}
    quiet = Run(tmp_path / "quiet", FakeApi(lists={NODES: [static]}, absent=(NODECLAIMS,)))
    await quiet.recorder.start()
    await quiet.at(60)
    summary = (await quiet.finish()).summary
    assert summary.autoscaler == "none"
    assert set(summary.node_pools) == {"static"}
    # sk-cloudprov's minimum nodes without an autoscaler (env up --services): none ran.
    baseline = Run(tmp_path / "baseline", FakeApi(lists={NODES: [cloudprov_node("small-1")]},
                                                  absent=(NODECLAIMS,)))
    await baseline.recorder.start()
    await baseline.at(60, (NODES, "MODIFIED", cloudprov_node("small-1")))
    assert (await baseline.finish()).summary.autoscaler == "none"
    # A restarted recorder keeps what the cluster no longer shows: Karpenter's nodes are gone.
    first = Run(tmp_path, FakeApi(lists={NODES: [node("simkube-a")]}))
    await first.recorder.start()
    await first.at(60)
    await first.recorder.stop()
    again = Run(tmp_path, FakeApi(absent=(NODECLAIMS,)))
    await again.recorder.start()
    await again.at(120)
    summary = (await again.finish()).summary
    assert summary.autoscaler == "karpenter"
    assert summary.groups["large"].instance_type == "m5.2xlarge"
    assert set(summary.node_pools) == {"simkube"}


class Clocked:
    """A recorder whose wall and trace clocks are both moved by hand."""

    def __init__(self, run_dir: Path, api: FakeApi, *, interval: float = 3600.0) -> None:
        self.api, self.wall, self.trace = api, 0.0, 0.0
        self.recorder = Recorder(
            kube=cast(KubeClient, api), run_dir=run_dir, simulation="sim", run=1,
            namespace_prefix="virtual", groups=PRICES, trace_clock=lambda: self.trace,
            scale=TimeScale(20.0), interval=interval, monotonic=lambda: self.wall,
            now=lambda: START)

    async def at(self, wall: float, trace: float, *sent: tuple[str, str, dict[str, Any]]) -> None:
        self.wall, self.trace = wall, trace
        for path, kind, obj in sent:
            self.api.send(path, kind, obj)
        await self.api.settle()


def curve(results: RunResults) -> list[tuple[float, int, int, int]]:
    return [(r.trace_s, r.pods_pending, r.pods_running, r.nodes["small"])
            for r in results.timeline]


async def test_rows_follow_the_watches_at_the_trace_time_observed(tmp_path: Path) -> None:
    run = Clocked(tmp_path / "run-1", FakeApi(absent=(NODECLAIMS,)))
    await run.recorder.start()
    await run.at(0.1, 2.001, (PODS, "ADDED", pod("a")))
    # two nodes of one scale-up in one burst (the same trace millisecond), a third 0.1 s later
    await run.at(0.2, 4.5, (NODES, "ADDED", cloudprov_node("small-1")),
                 (NODES, "ADDED", cloudprov_node("small-2")))
    await run.at(0.3, 6.0, (NODES, "ADDED", cloudprov_node("small-3")))
    await run.at(0.35, 7.0, (PODS, "MODIFIED", pod("a", node_name="small-1", version="2")))
    await run.at(0.4, 8.25, (PODS, "MODIFIED", pod("a", node_name="small-1", phase="Running",
                                                    version="3")))
    await run.at(5.0, 100.0, (NODES, "DELETED", cloudprov_node("small-3")))
    await run.recorder.stop()
    results = load_run(run.recorder.run_dir)
    # no row for the binding (no count changed); the final row is the deletion's millisecond
    assert curve(results) == [(0, 0, 0, 0), (2.001, 1, 0, 0), (4.5, 1, 0, 2), (6.0, 1, 0, 3),
                              (8.25, 0, 1, 3), (100.0, 0, 1, 2)]
    assert [(r.trace_s, r.delta, r.nodes_after) for r in results.scaling
            if r.source == "nodes"] == [(4.5, 1, 1), (4.5, 1, 2), (6.0, 1, 3), (100.0, -1, 2)]
    small = results.summary.groups["small"]
    assert (small.scale_ups, small.scale_downs, small.peak_nodes) == (1, 1, 3)
    # 2 nodes 4.5..6, 3 until 100, then 2: node hours of the exact steps
    assert small.node_hours == approx((2 * 1.5 + 3 * 94.0) / 3600)
    assert results.summary.pods.pending_p50_s == approx(7.0 - 2.001)  # bound at 7.0

    # a restarted recorder goes on from the last row; steps count across the restart
    again = Clocked(tmp_path / "run-1", FakeApi(lists={NODES: [cloudprov_node("small-1"),
                                                               cloudprov_node("small-2")]},
                                                absent=(NODECLAIMS,)))
    again.trace = 90.0  # a restarted sk-ctrl's clock before the driver's first report
    await again.recorder.start()
    await again.at(0.1, 120.0, (NODES, "ADDED", cloudprov_node("small-4")))
    await again.recorder.stop()
    results = load_run(again.recorder.run_dir)
    assert curve(results)[6:] == [(100.0, 0, 0, 2), (120.0, 0, 0, 3)]  # pod a: gone
    assert results.summary.groups["small"].scale_ups == 2


async def test_heartbeat_rows_while_nothing_happens(tmp_path: Path) -> None:
    api = FakeApi(lists={NODES: [cloudprov_node("small-1")]}, absent=(NODECLAIMS,))
    recorder = Recorder(kube=cast(KubeClient, api), run_dir=tmp_path / "run-1",
                        simulation="sim", run=1, namespace_prefix="virtual", groups=PRICES,
                        trace_clock=lambda: 0.0, scale=TimeScale(1.0), interval=0.01)
    await recorder.start()
    await asyncio.sleep(0.1)
    await recorder.stop()
    rows = load_run(recorder.run_dir).timeline
    assert len(rows) >= 5  # the first, a heartbeat every 10 ms, the last
    assert {(r.nodes_total, r.pods_pending) for r in rows} == {(1, 0)}
    assert [r.wall_s for r in rows] == sorted(r.wall_s for r in rows)
