"""The Indexed Job of ``skctl sweep run --on-cluster`` against a real API server: the
rendered ConfigMap and Job pass a server-side dry run (schema, defaulting, admission: what a
real cluster checks before it would store them), through skctl's own apply and through
``kubectl apply --dry-run=server`` of the ``--render`` output; nothing is stored.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from simkube.env.toolchain.cache import binary_path
from simkube.env.toolchain.catalog import Binary
from tests.conftest import SimEnv, skctl
from tests.integration.deploy.manifests import run

pytestmark = pytest.mark.integration
SWEEP = Path(__file__).resolve().parents[3] / "docs" / "examples" / "sweeps" / "dsb-ca.yaml"
JOB_FLAGS = ("--on-cluster", "--image", "simkube-py-sweep:0.1.0", "--pvc", "sweep-results",
             "--parallel", "2")


def test_skctl_s_server_side_dry_run_passes_and_stores_nothing(sim_env: SimEnv) -> None:
    done = skctl("sweep", "run", str(SWEEP), *JOB_FLAGS, "--dry-run",
                 "--kubeconfig", sim_env.kubeconfig)
    assert done.stdout.splitlines() == [
        "configmap/sweep-dsb-ca-inputs applied in namespace default (server dry run: "
        "checked, nothing stored)",
        "job/sweep-dsb-ca applied in namespace default (server dry run: checked, nothing "
        "stored)"]
    kubectl = binary_path(Binary.KUBECTL)
    stored = run(kubectl, "--kubeconfig", sim_env.kubeconfig, "get", "jobs,configmaps",
                 "-n", "default", "-l", "simkube.dev/sweep=dsb-ca", "-o", "name")
    assert stored.strip() == ""


def test_the_rendered_job_passes_kubectl_s_server_side_dry_run(sim_env: SimEnv) -> None:
    rendered = skctl("sweep", "run", str(SWEEP), *JOB_FLAGS, "--render").stdout
    objects = list(yaml.safe_load_all(rendered))
    assert [o["kind"] for o in objects] == ["ConfigMap", "Job"]
    out = run(binary_path(Binary.KUBECTL), "--kubeconfig", sim_env.kubeconfig, "apply",
              "--server-side", "--dry-run=server", "--field-manager=skctl-sweep-test",
              "-o", "yaml", "-f", "-", stdin=rendered)
    answered = [o for o in yaml.safe_load_all(out) if o]
    items = answered[0]["items"] if answered[0]["kind"] == "List" else answered
    job = next(o for o in items if o["kind"] == "Job")
    # The server's defaulting ran: an Indexed Job of 12 completions, 2 at a time.
    assert job["spec"]["completionMode"] == "Indexed"
    assert (job["spec"]["completions"], job["spec"]["parallelism"]) == (12, 2)
    assert job["spec"]["backoffLimitPerIndex"] == 1
    assert job["spec"]["template"]["spec"]["containers"][0]["command"][:3] == [
        "skctl", "sweep", "worker"]
