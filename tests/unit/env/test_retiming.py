"""The timers a local environment chose for itself, read from its state."""

from __future__ import annotations

from pathlib import Path

import pytest

from simkube.core.simtime import TimeScale
from simkube.core.timers import NEVER
from simkube.env import retiming, state
from simkube.env.autoscalers.karpenter_catalog import Disruption
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
