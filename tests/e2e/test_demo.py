"""``make demo`` as a user runs it, with a faster workload timeline.

The demo starts its own environment (with services), records a workload with sk-tracer,
exports it, replays it through a Simulation and reports; this test checks what the user is
promised: it exits 0, prints the report's path, the page shows the plots, the numbers are
there, and nothing is left running.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import skctl

pytestmark = pytest.mark.e2e


def test_demo_records_replays_and_reports(tmp_path: Path) -> None:
    env = f"demo-e2e-{os.getpid()}"
    # Its own state directory: the results the demo keeps after tearing down stay in tmp.
    variables = {**os.environ, "SIMKUBE_HOME": str(tmp_path / "home")}
    result = subprocess.run(
        [sys.executable, "-m", "simkube.skctl.demo", "--env", env, "--workdir", str(tmp_path),
         "--stretch", "0.4", "--speed", "4"],
        capture_output=True, text=True, timeout=420, check=False, env=variables)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    match = re.search(r"report:\s*(\S+\.html)", output)
    assert match, output
    page = Path(match.group(1)).read_text()
    assert page.count("data:image/png;base64,") >= 4
    summary = json.loads(next(Path(match.group(1)).parent.parent.glob("summary.json"))
                         .read_text())
    assert summary["pods"]["seen"] >= 20
    # Most pods run; at the peak some never get a node (no autoscaler in the demo), and since
    # replays no longer complete and replace Deployment pods, there are no extra ones.
    assert summary["pods"]["scheduled"] >= summary["pods"]["seen"] * 0.6
    # The peak asks for more CPU than the groups' minimum sizes have: some pods waited.
    assert summary["pods"]["peak_pending"] > 0
    assert summary["cost_usd"] > 0
    assert (tmp_path / "shop.trace").stat().st_size > 0
    # Torn down: no environment left, but the report (outside it) is still there.
    gone = skctl("env", "status", "--name", env, check=False, env=variables)
    assert gone.returncode == 3
    assert f"no environment named '{env}'" in gone.stderr
    assert Path(match.group(1)).is_relative_to(tmp_path / "home" / "results" / env)
