"""A run's timers reach a real Karpenter and its NodePools, and are taken back.

``env.retiming`` restarts Karpenter (afresh, as CA) with its batch flags divided by the run's
speed and re-applies the NodePools and KWOK node classes with consolidateAfter and the
provisioning delays divided by it; ``restore`` puts the environment's own back. The
environment is started with ``--consolidate-after 5m``: a run whose settings leave
consolidateAfter unset gets those 5 minutes of trace time, not Karpenter's 0 s.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from simkube.cloudprov.config import load_file
from simkube.core.durations import parse_duration
from simkube.core.kubeapi import KubeClient
from simkube.core.simtime import TimerSettings, TimeScale
from simkube.env import retiming
from simkube.env.autoscalers.karpenter_catalog import REGISTRATION_DELAY_ANNOTATION, pool_plans
from simkube.env.pacing import SPEED_VARIABLE
from simkube.env.paths import env_dir
from tests.conftest import skctl

pytestmark = pytest.mark.integration
NODEPOOLS = "/apis/karpenter.sh/v1/nodepools"
NODECLASSES = "/apis/karpenter.kwok.sh/v1alpha1/kwoknodeclasses"


def state_of(name: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((env_dir(name) / "state.json").read_text())
    return found


def karpenter_argv(name: str) -> list[str]:
    return list(next(c["argv"] for c in state_of(name)["components"]
                     if c["name"] == "karpenter"))


def karpenter_flags(name: str) -> dict[str, int]:
    """Karpenter's batch flags, in milliseconds (Go reads 1000ms and 1s alike)."""
    argv = karpenter_argv(name)
    return {flag: parse_duration(arg.partition("=")[2], field=flag, allow_zero=True)
            for arg in argv for flag in ("--batch-idle-duration", "--batch-max-duration")
            if arg.startswith(f"{flag}=")}


def pools(name: str) -> tuple[dict[str, str], dict[str, str]]:
    """Each NodePool's consolidateAfter and each node class's registration delay: its
    spec's, or (faster than real time, with the spec's 0s) its trace-time annotation."""
    async def read() -> tuple[dict[str, str], dict[str, str]]:
        kube = await KubeClient.connect(kubeconfig=Path(state_of(name)["kubeconfig"]))
        try:
            nodepools = (await kube.request("GET", NODEPOOLS))["items"]
            classes = (await kube.request("GET", NODECLASSES))["items"]
        finally:
            await kube.close()
        return ({p["metadata"]["name"]: p["spec"]["disruption"]["consolidateAfter"]
                 for p in nodepools},
                {c["metadata"]["name"]: (c["metadata"].get("annotations") or {}).get(
                    REGISTRATION_DELAY_ANNOTATION, c["spec"]["nodeRegistrationDelay"])
                 for c in classes})
    return asyncio.run(read())


def test_a_run_retimes_karpenter_and_its_pools_and_restore_undoes_it() -> None:
    name = f"retime-karp-{os.getpid()}"
    skctl("env", "up", "--name", name, "--autoscaler", "karpenter", "--consolidate-after", "5m")
    try:
        plans = pool_plans(load_file(Path(state_of(name)["node_groups"])))
        delays = {plan.name: plan.delay_s for plan in plans}
        before = state_of(name)["components"]
        own = ({plan.name: "300s" for plan in plans},
               {pool: f"{round(delay)}s" for pool, delay in delays.items()})
        assert karpenter_flags(name) == {"--batch-idle-duration": 1000,
                                         "--batch-max-duration": 10_000}
        assert pools(name) == own

        settings = TimerSettings(values={"karpenter.consolidateAfter": 100_000})
        restarted = retiming.retime(name, scale=TimeScale(10), settings=settings, fresh=True)
        assert "karpenter" in restarted
        # The batch flags stay in trace time: Karpenter's clock divides its waits by the
        # speed it is given in its environment (env/autoscalers/karpenter.py run_argv).
        assert karpenter_flags(name) == {"--batch-idle-duration": 1000,
                                         "--batch-max-duration": 10_000}
        assert f"{SPEED_VARIABLE}=10" in karpenter_argv(name)
        # The build waits the registration delay in trace time, to the ms (registration.go).
        assert pools(name) == ({plan.name: "10s" for plan in plans},
                               {pool: f"{round(delay * 1000)}ms"
                                for pool, delay in delays.items()})
        assert json.loads(skctl("env", "status", "--name", name, "--json").stdout)["healthy"]

        assert "karpenter" in retiming.restore(name)
        assert state_of(name)["components"] == [
            {**record, "pid": now["pid"], "start_ticks": now["start_ticks"]}
            for record, now in zip(before, state_of(name)["components"], strict=True)]
        assert karpenter_flags(name) == {"--batch-idle-duration": 1000,
                                         "--batch-max-duration": 10_000}
        assert pools(name) == own

        # Unset in the run: the environment's 5 m of trace time, ÷ 10.
        retiming.retime(name, scale=TimeScale(10), fresh=True)
        assert pools(name)[0] == {plan.name: "30s" for plan in plans}
        retiming.restore(name)
        assert pools(name) == own
        assert json.loads(skctl("env", "status", "--name", name, "--json").stdout)["healthy"]
    finally:
        skctl("env", "down", "--name", name, check=False)
