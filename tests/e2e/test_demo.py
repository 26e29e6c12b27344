"""``make demo`` as a user runs it, with a faster recording.

The demo records a workload with sk-tracer in a "production" environment, exports it,
stretches it to the shop's day, replays it through a Simulation in a second environment with
Karpenter (no CA binary is given here) and reports; this test checks what the user is
promised: it exits 0, prints the report's path, the page shows the plots, the headline
names Karpenter, the nodes rose above where they started and fell again, and nothing is
left running. The shop's web front end runs under an HPA: production's HPA scaled it (the
recording's usage samples count more pods at the sale), the stretched trace carries that
usage on the day's clock, and the replay's own HPA scaled web up from its minimum, as the
demo's output and the report's HPA plot say.
"""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from simkube.skctl.demo_shop import WEB_MIN
from simkube.skctl.demo_workload import DAY_STRETCH
from simkube.trace import read_trace
from tests.conftest import skctl

pytestmark = pytest.mark.e2e


@pytest.mark.timeout(900)  # under load the demo has taken 6 minutes (docs/benchmarks.md)
def test_demo_records_replays_and_reports(tmp_path: Path) -> None:
    env, stretch = f"demo-e2e-{os.getpid()}", 0.4
    # Its own state directory: the results the demo keeps after tearing down stay in tmp.
    variables = {**os.environ, "SIMKUBE_HOME": str(tmp_path / "home")}
    variables.pop("SIMKUBE_CLUSTER_AUTOSCALER", None)  # the demo's default: Karpenter
    result = subprocess.run(
        [sys.executable, "-m", "simkube.skctl.demo", "--env", env, "--workdir", str(tmp_path),
         "--stretch", str(stretch)],
        capture_output=True, text=True, timeout=780, check=False, env=variables)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    match = re.search(r"report:\s*(\S+\.html)", output)
    assert match, output
    page = Path(match.group(1)).read_text()
    assert page.count("data:image/png;base64,") >= 5  # with the HPA's replicas
    run_dir = Path(match.group(1)).parent.parent
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["autoscaler"] == "karpenter"
    assert "shop-replay/run-1 (karpenter):" in output  # the headline names it
    assert summary["pods"]["seen"] >= 20
    # The peak asks for more than the quiet hours' nodes: pods waited, Karpenter launched
    # nodes for them and took some away once the sale was over.
    assert summary["pods"]["peak_pending"] > 0
    with (run_dir / "timeline.csv").open() as rows:
        totals = [int(row["nodes_total"]) for row in csv.DictReader(rows)]
    assert max(totals) > totals[0]
    assert totals[-1] < max(totals)
    assert summary["autoscaler_events"] > 0
    assert sum(group["scale_downs"] for group in summary["groups"].values()) > 0
    # Nodes arrive while the pods still want them: (nearly) every pod runs.
    assert summary["pods"]["scheduled"] >= summary["pods"]["seen"] * 0.9
    assert summary["cost_usd"] > 0
    assert (tmp_path / "shop.trace").stat().st_size > 0
    # Production's HPA acted: web's recorded usage came from more pods at the sale.
    (web,) = [u for u in read_trace(tmp_path / "shop.trace").usage if u.name == "web"]
    assert web.period_ms == 1000
    assert max(sample.pods for sample in web.samples) > WEB_MIN
    # Stretched to the day, the usage samples are too.
    (day,) = [u for u in read_trace(tmp_path / "shop-day.trace").usage if u.name == "web"]
    assert day.period_ms == round(1000 * DAY_STRETCH / stretch)
    assert len(day.samples) == len(web.samples)
    # The replay's own HPA scaled web up from its minimum, and the demo says so.
    hpa = summary["hpas"]["shop/web"]
    assert hpa["scale_ups"] >= 1
    assert hpa["peak_desired"] > hpa["min_desired"]
    assert (f"HPA shop/web: replicas {hpa['min_desired']} → {hpa['peak_desired']} → "
            f"{hpa['final_desired']}, {hpa['scale_events']} scale events") in output
    plot = re.search(r"hpa:\s*(\S+\.png)", output)
    assert plot, output
    assert Path(plot.group(1)).stat().st_size > 0
    # Torn down: no environment left, but the report (outside it) is still there.
    gone = skctl("env", "status", "--name", env, check=False, env=variables)
    assert gone.returncode == 3
    assert f"no environment named '{env}'" in gone.stderr
    assert Path(match.group(1)).is_relative_to(tmp_path / "home" / "results" / env)
    production = skctl("env", "status", "--name", f"{env}-prod", check=False, env=variables)
    assert production.returncode == 3
