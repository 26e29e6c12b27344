from __future__ import annotations

from pathlib import Path

import pytest

from simkube.core.errors import EnvironmentStateError
from simkube.core.simtime import TimerSettings, TimeScale, plan
from simkube.env.autoscalers.karpenter import karpenter_spec, merge_flags, run_argv
from simkube.env.controlplane.components import Layout
from simkube.env.pacing import RUN_CONFIGMAP_VARIABLE, SPEED_VARIABLE

pytestmark = pytest.mark.unit


def test_karpenter_flags_replace_defaults_and_wiring_is_refused() -> None:
    flags = merge_flags(("--batch-max-duration=20s",))
    assert "--batch-max-duration=20s" in flags
    assert "--batch-max-duration=10s" not in flags
    with pytest.raises(EnvironmentStateError, match="wires Karpenter to this environment"):
        merge_flags(("--metrics-port=1",))
    with pytest.raises(EnvironmentStateError, match="is not of the form --name=value"):
        merge_flags(("batch",))


def test_the_command_line_wires_karpenter_to_the_environment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("simkube.env.autoscalers.karpenter.binary_path",
                        lambda _b: Path("/bin/karp"))
    layout = Layout(root=tmp_path)
    spec = karpenter_spec(layout=layout, health_port=8081, metrics_port=8080)
    # Its flag set has no --kubeconfig: the environment's admin comes through KUBECONFIG,
    # kept in the argv so that a supervisor restart keeps it too.
    assert spec.argv[1:3] == [f"KUBECONFIG={layout.admin_kubeconfig}", "/bin/karp"]
    assert "--disable-leader-election" in spec.argv
    assert "--health-probe-port=8081" in spec.argv
    assert spec.health_url == "http://127.0.0.1:8081/readyz"


BASE = ["/usr/bin/env", "KUBECONFIG=/k", "/bin/karp", "--disable-leader-election",
        "--batch-idle-duration=1s", "--batch-max-duration=10s", "--log-level=info"]


def test_a_run_passes_its_speed_and_batching_in_trace_time() -> None:
    settings = TimerSettings(values={"karpenter.batch-max-duration": 20_000})
    argv = run_argv(BASE, plan=plan(scale=TimeScale(10.0), settings=settings),
                    skip=("consolidateAfter",))
    # The speed goes in env's assignments; the clock it sets divides the batcher's waits,
    # so the flags stay the trace values (dividing them too would count the speed twice).
    assert argv[:4] == ["/usr/bin/env", f"{SPEED_VARIABLE}=10.0", "KUBECONFIG=/k", "/bin/karp"]
    assert "--batch-idle-duration=1000ms" in argv
    assert "--batch-max-duration=20000ms" in argv
    assert not any(arg.startswith("--consolidateAfter") for arg in argv)


def test_speed_one_and_a_new_speed_replace_the_old_one() -> None:
    at_ten = run_argv(BASE, plan=plan(scale=TimeScale(10.0)))
    at_two = run_argv(at_ten, plan=plan(scale=TimeScale(2.5)))
    assert [a for a in at_two if a.startswith(SPEED_VARIABLE)] == [f"{SPEED_VARIABLE}=2.5"]
    assert not any(a.startswith(SPEED_VARIABLE) for a in run_argv(at_ten, plan=plan(
        scale=TimeScale(1.0))))


def test_a_run_names_its_configmap_for_the_holds_and_speed_one_drops_it() -> None:
    held = run_argv(BASE, plan=plan(scale=TimeScale(10.0)), run_configmap="ns/cm")
    assert held[:3] == ["/usr/bin/env", f"{SPEED_VARIABLE}=10.0",
                        f"{RUN_CONFIGMAP_VARIABLE}=ns/cm"]
    again = run_argv(held, plan=plan(scale=TimeScale(20.0)), run_configmap="ns/cm")
    assert [a for a in again if a.startswith(RUN_CONFIGMAP_VARIABLE)] == [
        f"{RUN_CONFIGMAP_VARIABLE}=ns/cm"]
    # Speed 1 never holds: neither variable is left.
    back = run_argv(held, plan=plan(scale=TimeScale(1.0)), run_configmap="ns/cm")
    assert not any(a.startswith((SPEED_VARIABLE, RUN_CONFIGMAP_VARIABLE)) for a in back)


def test_the_command_line_of_env_up_runs_at_speed_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("simkube.env.autoscalers.karpenter.binary_path",
                        lambda _b: Path("/bin/karp"))
    spec = karpenter_spec(layout=Layout(root=tmp_path), health_port=1, metrics_port=2)
    # What a Simulation's end restores: no speed, so Karpenter's waits are its own.
    assert not any(arg.startswith(SPEED_VARIABLE) for arg in spec.argv)
