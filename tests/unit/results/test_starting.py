"""Pods bound to a node that never start: flagged once, counted, named, read back (#18)."""

from __future__ import annotations

from pathlib import Path

import pytest

from simkube.core.simtime import TimeScale
from simkube.report.loading import RunData
from simkube.report.metrics import headlines, metric_rows
from simkube.results import files, reading
from simkube.results.model import PodRow
from simkube.results.pods import PodTracker
from simkube.results.summary import pods_summary
from tests.unit.results.objects import pod

pytestmark = pytest.mark.unit
BOUND = "2026-01-01T00:00:00Z"


def tracker() -> PodTracker:
    pods = PodTracker(prefix="virtual", group_of=lambda _: "general")
    pods.observe(pod("stuck", node_name="n1", scheduled_at=BOUND), trace_s=10)
    pods.observe(pod("ran", node_name="n1", scheduled_at=BOUND), trace_s=10)
    pods.observe(pod("ran", node_name="n1", phase="Running"), trace_s=11)
    pods.observe(pod("waiting"), trace_s=10)  # not bound: pending, not stuck
    slow = pod("slow", node_name="n1", scheduled_at=BOUND)
    slow["metadata"]["annotations"] = {"simkube.dev/startup-delay": "5000ms",
                                       "simkube.dev/startup-delay-max": "1000ms"}
    pods.observe(slow, trace_s=10)
    return pods


def test_only_bound_pods_past_the_grace_and_their_own_delay_are_flagged_once() -> None:
    pods = tracker()
    assert pods.overdue(trace_s=39, grace_s=30, scale=TimeScale(10)) == []
    assert [p.name for p in pods.overdue(trace_s=41, grace_s=30, scale=TimeScale(10))] == ["stuck"]
    assert pods.overdue(trace_s=80, grace_s=30, scale=TimeScale(10)) == []  # flagged once
    # 6 wall seconds of startup delay at speed 10 are 60 trace seconds more.
    assert [p.name for p in pods.overdue(trace_s=101, grace_s=30, scale=TimeScale(10))] == ["slow"]


def test_a_flagged_pod_stays_counted_after_it_starts_and_the_summary_names_it() -> None:
    pods = tracker()
    pods.overdue(trace_s=41, grace_s=30, scale=TimeScale(1))
    pods.observe(pod("stuck", node_name="n1", phase="Running"), trace_s=50)
    rows = pods.rows()
    assert [r.name for r in rows if r.bound_unstarted] == ["stuck"]
    summary = pods_summary(rows, [])
    assert summary.bound_never_started == 1
    assert list(summary.bound_never_started_pods) == ["virtual-shop/stuck"]


def test_pods_csv_keeps_the_flag_and_older_files_still_read(tmp_path: Path) -> None:
    row = PodRow(namespace="virtual-shop", name="stuck", group="general", node="n1",
                 created_trace_s=1.0, scheduled_trace_s=2.0, pending_s=1.0,
                 finished_trace_s=None, phase="Pending", bound_unstarted=True)
    path = tmp_path / files.PODS
    files.write_pods(path, [row])
    assert reading.read_pods(path) == [row]
    legacy = tmp_path / "old.csv"
    legacy.write_text(",".join(files.LEGACY_POD_COLUMNS) + "\n"
                      "virtual-shop,p,general,n1,1,2,1,,Running\n")
    assert reading.read_pods(legacy)[0].bound_unstarted is False


def test_the_report_counts_and_warns_with_names() -> None:
    summary = {"state": "Finished", "pods": {"bound_never_started": 7,
                                             "bound_never_started_pods": [f"ns/p{i}"
                                                                          for i in range(7)]}}
    run = RunData(label="stuck/run-1", directory=Path("stuck/run-1"), summary=summary,
                  timeline={}, groups=(), pending_s=())
    keys = [row.key for row in metric_rows([run])]
    assert "pods.bound_never_started" in keys
    warning = [line for line in headlines(run) if line.startswith("WARNING")]
    assert warning == ["WARNING: 7 pod(s) bound to a node but never started (the simulator's "
                       "fault, not the workload's): ns/p0, ns/p1, ns/p2, ns/p3, ns/p4 and 2 "
                       "more"]
