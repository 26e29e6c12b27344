"""``skctl study autoscalers`` as a user runs it, on a short recorded trace.

``make test`` has no Cluster Autoscaler binary (this machine's module proxy refuses CA), so
the study says so and runs Karpenter alone, in a fresh environment of its own; the autoscaler
tier runs both halves (tests/autoscaler/test_study.py). Checked: it exits 0, prints the
summary and the report's path, Karpenter's nodes rise for the load and fall after it, the
figures are those of the run's results, and no environment is left running.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from simkube.results import load_run
from tests.conftest import skctl

pytestmark = pytest.mark.e2e
TRACE = Path(__file__).parents[1] / "data" / "recorded" / "fidelity-3min.trace"


def test_the_study_runs_karpenter_alone_without_a_cluster_autoscaler(tmp_path: Path) -> None:
    variables = {key: value for key, value in os.environ.items()
                 if key != "SIMKUBE_CLUSTER_AUTOSCALER"}
    variables["SIMKUBE_HOME"] = str(tmp_path / "home")
    # The trace and ten minutes of trace time after it: the load's fall, then consolidation.
    result = skctl("study", "autoscalers", "--trace", str(TRACE), "--speed", "10",
                   "--tail", "10m", "--output", str(tmp_path / "study"),
                   env=variables, timeout=600)
    output = result.stdout + result.stderr
    assert "Cluster Autoscaler is not available" in output
    karpenter = load_run(tmp_path / "study" / "karpenter")
    totals = [row.nodes_total for row in karpenter.timeline]
    # Karpenter keeps no minimum: nodes come for the load and go by consolidation after it.
    assert max(totals) > totals[0], totals
    assert totals[-1] < max(totals), totals
    assert karpenter.summary.cost_usd > 0
    # The recorder tells Karpenter's decisions apart: launches, and removals by why.
    summary = karpenter.summary
    assert summary.autoscaler == "karpenter"
    assert set(summary.node_pools) == {"simkube"}
    assert set(summary.instance_types) <= {"m5.large", "m5.2xlarge"}
    assert sum(t["cost_usd"] for t in summary.instance_types.values()) == pytest.approx(
        summary.cost_usd, abs=1e-5)
    assert sum(summary.disruptions.values()) > 0, summary.disruptions
    launches = [row for row in karpenter.scaling if row.reason == "Launched"]
    assert launches
    assert all(row.source == "autoscaler" and row.delta == 1 for row in launches)
    # With no node at the start, the trace's first burst (72 s of trace, 7 s here) is mostly
    # gone before Karpenter's first nodes are Ready; what stays gets scheduled.
    assert karpenter.summary.pods.scheduled > 0
    assert karpenter.summary.pods.pending_p90_s is not None
    # The terminal summary states the run's own figures.
    row = next(line for line in result.stdout.splitlines() if re.match(r"│ karpenter ", line))
    assert f"${karpenter.summary.cost_usd:.3f}" in row
    assert str(max(totals)) in row
    page = re.search(r"report:\s*(\S+\.html)", result.stdout)
    assert page
    assert Path(page.group(1)).is_file()
    # Each environment was stopped and removed; its results were copied into the study.
    assert not list((tmp_path / "home" / "envs").glob("study-*"))
    assert (tmp_path / "study" / "karpenter" / "summary.json").is_file()
