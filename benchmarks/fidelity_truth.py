"""The ground truth: the workload run at speed 1, recorded by sk-tracer and measured.

The truth must be measured exactly as a replay is, or the benchmark would compare two
instruments instead of two runs: the results recorder a Simulation's run uses
(``simkube.results.Recorder``) samples the same curves, with speed 1 and the wall clock since
the workload's start as trace clock, into a run directory of the same layout. The trace is
exported for the same window (``--start`` at that instant, ``--end`` one duration later), so
trace time 0 is the same instant in the truth and in every replay of it.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from benchmarks import fidelity_workload as workload
from benchmarks.fidelity_replay import SEED
from simkube.cloudprov.config import load_file
from simkube.core.kubeapi import KubeClient
from simkube.core.simtime import REAL_TIME
from simkube.ctrl.timing import publish, withdraw
from simkube.env import ports
from simkube.env.services.commands import DEFAULT_NODE_GROUPS
from simkube.results import Recorder, RunSummary
from simkube.simulation.run_configmap import RunTiming

BIN = Path(sys.executable).parent
TRUTH_NAME = "fidelity-truth"
TRACER_CONFIG = f"""\
trackedObjects:
  apps/v1.Deployment: {{podSpecTemplatePaths: [/spec/template], trackLifecycle: true}}
  batch/v1.CronJob: {{podSpecTemplatePaths: [/spec/jobTemplate/spec/template],
                     trackLifecycle: true}}
namespaces: [{workload.NAMESPACE}]
"""
TRACER_START_TIMEOUT = 60.0


class Tracer:
    """sk-tracer as a user runs it beside a cluster; ``stop()`` is safe to call twice."""

    def __init__(self, *, kubeconfig: str, workdir: Path, config_text: str = TRACER_CONFIG,
                 namespace: str = workload.NAMESPACE) -> None:
        config = workdir / "tracer.yaml"
        config.write_text(config_text)
        self.namespace = namespace
        self.address = f"127.0.0.1:{ports.allocate(1)[0]}"
        self.log = workdir / "sk-tracer.log"
        with self.log.open("wb") as log:
            self._process = subprocess.Popen(
                [str(BIN / "sk-tracer"), "--store", str(workdir / "tracer-store"),
                 "--kubeconfig", kubeconfig, "--config", str(config),
                 "--listen", self.address, "--log-json"],
                stdout=log, stderr=subprocess.STDOUT)

    def wait_watching(self) -> None:
        """Return once every tracked kind is being watched; ``RuntimeError`` if it never is."""
        deadline = time.monotonic() + TRACER_START_TIMEOUT
        while time.monotonic() < deadline and self._process.poll() is None:
            status = subprocess.run([str(BIN / "skctl"), "tracer", "status", "--tracer",
                                     self.address, "--json"],
                                    capture_output=True, text=True, check=False)
            kinds = json.loads(status.stdout).get("kinds", []) if status.returncode == 0 else []
            if kinds and all(kind["state"] == "WATCHING" for kind in kinds):
                return
            time.sleep(0.5)
        raise RuntimeError(f"sk-tracer did not start watching within {TRACER_START_TIMEOUT:g}s "
                           f"(exit code {self._process.poll()}); see {self.log}")

    def export(self, *, start: float, end: float, output: Path) -> None:
        """The window [start, end) (Unix seconds) of the workload's namespace as a trace."""
        subprocess.run([str(BIN / "skctl"), "export", "--tracer", self.address, "--namespace",
                        self.namespace, "--start", rfc3339(start), "--end", rfc3339(end),
                        "-o", str(output)], check=True, stdout=sys.stderr, timeout=600)

    def stop(self) -> None:
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(timeout=30)


def rfc3339(unix_s: float) -> str:
    when = datetime.datetime.fromtimestamp(unix_s, tz=datetime.UTC)
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


async def _record(*, kubeconfig: Path, run_dir: Path, duration_s: float,
                  prices: Mapping[str, float],
                  on_step: Callable[[workload.Step], None]) -> tuple[float, RunSummary]:
    kube = await KubeClient.connect(kubeconfig=kubeconfig)
    groups_namespace = load_file(DEFAULT_NODE_GROUPS).namespace
    try:
        # The truth's provisioning delays are drawn as the replays' are: one seed, the same
        # delay for the n-th instance of a group (sk-cloudprov's current_run.py). Without
        # it every speed drew its own ±15 s, and that alone moved pending p90 by tens of %.
        await publish(kube, namespace=groups_namespace, timing=RunTiming(
            scale=REAL_TIME, seed=SEED, run=f"{TRUTH_NAME}-r1"))
        await workload.set_up(kube=kube)
        loop = asyncio.get_running_loop()
        started, started_unix = loop.time(), time.time()
        recorder = Recorder(kube=kube, run_dir=run_dir, simulation=TRUTH_NAME, run=1,
                            namespace_prefix=workload.TRUTH_PREFIX, groups=prices,
                            trace_clock=lambda: time.time() - started_unix, scale=REAL_TIME)
        await recorder.start()
        try:
            await workload.play(kube=kube, steps=workload.schedule(duration_s=duration_s),
                                started=started, on_step=on_step)
            await asyncio.sleep(max(0.0, started + duration_s - loop.time()))
        except BaseException:
            await recorder.stop(state="Failed")
            raise
        summary = await recorder.stop(state="Finished")
        await workload.tear_down(kube=kube)
    finally:
        await withdraw(kube, namespace=groups_namespace)
        await kube.close()
    return started_unix, summary


def record_truth(*, kubeconfig: Path, run_dir: Path, duration_s: float,
                 prices: Mapping[str, float],
                 on_step: Callable[[workload.Step], None]) -> tuple[float, RunSummary]:
    """Run the workload for ``duration_s`` while recording it; (its start in Unix seconds,
    the truth's summary). The workload's namespace is deleted afterwards."""
    return asyncio.run(_record(kubeconfig=kubeconfig, run_dir=run_dir, duration_s=duration_s,
                               prices=prices, on_step=on_step))
