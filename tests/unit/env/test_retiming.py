"""The timers a local environment chose for itself, read from its state."""

from __future__ import annotations

from pathlib import Path

import pytest

from simkube.core.config import load_yaml_mapping
from simkube.core.simtime import REAL_TIME, TimerSettings, TimeScale, plan
from simkube.core.timers import NEVER
from simkube.env import retiming, state
from simkube.env.autoscalers.karpenter_catalog import Disruption
from simkube.env.pacing import RUN_CONFIGMAP_VARIABLE, SPEED_VARIABLE
from simkube.env.paths import env_dir

pytestmark = pytest.mark.unit


def saved(name: str, *, autoscaler: str, disruption: Disruption | None,
          argv: list[str] | None = None) -> None:
    directory = env_dir(name)
    directory.mkdir(parents=True)
    components = [] if argv is None else [state.ComponentRecord(
        name=autoscaler, pid=1, start_ticks=1, port=1, health_url="", log="", argv=argv)]
    state.save(state.EnvState(name=name, directory=str(directory), kubeconfig="k",
                              api_server="https://127.0.0.1:1", started_at=0.0,
                              autoscaler=autoscaler, components=components,
                              disruption=disruption.to_state() if disruption else {}))


@pytest.mark.parametrize(("autoscaler", "disruption", "expected"), [
    ("karpenter", Disruption(consolidate_after_ms=300_000),
     {"karpenter.consolidateAfter": 300_000}),
    ("karpenter", Disruption(consolidate_after_ms=None), {"karpenter.consolidateAfter": NEVER}),
    ("karpenter", None, {"karpenter.consolidateAfter": 0}),  # Karpenter's own default
    ("cluster-autoscaler", None, {}),
])
def test_karpenter_environments_give_their_consolidate_after(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, autoscaler: str,
        disruption: Disruption | None, expected: dict[str, int]) -> None:
    monkeypatch.setenv("SIMKUBE_HOME", str(tmp_path))
    saved("e", autoscaler=autoscaler, disruption=disruption)
    assert retiming.environment_timers("e") == expected


@pytest.mark.parametrize(("argv", "speed", "skips"), [
    (["--scan-interval=2s"], 20.0, True),  # a replay bypasses CA's wall-clock pod-age wait
    (["--scan-interval=2s"], 1.0, False),  # the ground truth keeps it
    (["--bypassed-scheduler-names=mine"], 20.0, False),  # the user's CA never had it
    (None, 20.0, False),  # no Cluster Autoscaler here
])
def test_whether_a_run_skips_cas_pod_age_wait(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str] | None, speed: float,
        skips: bool) -> None:
    monkeypatch.setenv("SIMKUBE_HOME", str(tmp_path))
    saved("e", autoscaler="cluster-autoscaler", disruption=None, argv=argv)
    assert retiming.skips_age_wait("e", scale=TimeScale(speed)) is skips


def test_a_runs_scheduler_gets_trace_timers_and_the_speed(tmp_path: Path) -> None:
    # The project's scheduler keeps its queue on the run's clock, so at 20x its backoffs
    # are production's 1 s and 10 s of trace, not a 1 s wall floor (20 s of trace).
    config = tmp_path / "scheduler-config.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\n"
                      "kind: KubeSchedulerConfiguration\n")
    env = state.EnvState(name="e", directory=str(tmp_path), kubeconfig="k",
                         api_server="https://127.0.0.1:1", started_at=0.0)
    base = ["/bin/kube-scheduler", f"--config={config}"]
    settings = TimerSettings(values={"scheduler.podMaxBackoffSeconds": 20_000})
    argv = retiming._scheduler_argv(env, base, plan(scale=TimeScale(20.0), settings=settings),
                                    "ns/cm")
    assert argv[1:3] == [f"{SPEED_VARIABLE}=20.0", f"{RUN_CONFIGMAP_VARIABLE}=ns/cm"]
    assert "--pod-max-in-unschedulable-pods-duration=300000ms" in argv
    run_config = load_yaml_mapping(tmp_path / retiming.RUN_SCHEDULER_CONFIG, what="config")
    assert (run_config["podInitialBackoffSeconds"], run_config["podMaxBackoffSeconds"]) == (1, 20)
    truth = retiming._scheduler_argv(env, base, plan(scale=REAL_TIME), "ns/cm")
    assert truth[0] == "/bin/kube-scheduler"  # speed 1: upstream's behaviour, no variables
