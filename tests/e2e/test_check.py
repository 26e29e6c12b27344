"""``skctl check --trace`` replays through sk-ctrl and gates on what it recorded.

The unit tests fake the replay; this one goes through the real services: the trace replayed
as a Simulation (the code of ``skctl run --wait``), its figures written as a baseline file,
and the same Simulation, found by name in the environment's results, checked against that
file: identical runs must pass (exit 0) with the Markdown verdict.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.conftest import SimEnv, skctl

pytestmark = pytest.mark.e2e
TRACE = Path(__file__).parents[1] / "data" / "simkube" / "cronjob.sktrace"


def test_check_replays_a_trace_and_passes_against_its_own_baseline(
        services_env: SimEnv, tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.yaml"
    written = skctl("check", "--trace", str(TRACE), "--env", services_env.name,
                    "--name", "check-now", "--speed", "50", "--duration", "120s",
                    "--timeout", "240", "--write-baseline", str(baseline), timeout=300)
    assert f"baseline: {baseline}" in written.stdout
    document = yaml.safe_load(baseline.read_text())
    assert document["provenance"]["trace"] == str(TRACE)
    assert document["provenance"]["simulation"] == "check-now"
    assert document["figures"]["node_hours"]["repetitions"] == 1
    checked = skctl("check", "check-now", "--baseline", str(baseline),
                    "--env", services_env.name, "--markdown", check=False)
    assert checked.returncode == 0, (checked.stdout, checked.stderr)
    assert checked.stdout.startswith("### ✅ skctl check: PASS")
