"""The CA half of ``skctl study autoscalers``: both autoscalers on one short recorded trace.

The study starts a fresh environment per autoscaler, replays the trace at 10x with the same
seed, and compares: this checks that both runs happened on the same catalogue, that both
autoscalers added nodes for the load, that the comparison page overlays the two, and that
the terminal summary states each run's figures.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from simkube.results import load_run
from tests.conftest import skctl

pytestmark = pytest.mark.autoscaler
TRACE = Path(__file__).parents[1] / "data" / "recorded" / "fidelity-3min.trace"


def test_the_study_compares_cluster_autoscaler_with_karpenter(ca_binary: Path,
                                                              tmp_path: Path) -> None:
    variables = {**os.environ, "SIMKUBE_HOME": str(tmp_path / "home")}
    result = skctl("study", "autoscalers", "--trace", str(TRACE), "--speed", "10",
                   "--duration", "180s", "--autoscaler-binary", str(ca_binary),
                   "--output", str(tmp_path / "study"), env=variables, timeout=900)
    runs = {kind: load_run(tmp_path / "study" / kind)
            for kind in ("cluster-autoscaler", "karpenter")}
    for kind, run in runs.items():
        totals = [row.nodes_total for row in run.timeline]
        assert max(totals) > totals[0], (kind, totals)
        assert run.summary.cost_usd > 0, kind
        row = next(line for line in result.stdout.splitlines()
                   if line.startswith(f"│ {kind} "))
        assert f"${run.summary.cost_usd:.3f}" in row, (kind, row)
    # Same catalogue: every node either autoscaler made belongs to the file's groups.
    for run in runs.values():
        assert set(run.summary.groups) <= {"small", "large"}, run.summary.groups
    page = re.search(r"report:\s*(\S+compare\.html)", result.stdout)
    assert page, result.stdout
    html = Path(page.group(1)).read_text()
    assert "cluster-autoscaler" in html
    assert "karpenter" in html
