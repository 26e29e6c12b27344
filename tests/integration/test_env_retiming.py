"""A run's timers reach the real scheduler and controller-manager, and are taken back.

``env.retiming`` restarts the components that read their timers at start: the
controller-manager with its periods divided by the run's speed, the project's scheduler with
its backoffs (configuration file) and unschedulable flush (flag) in trace time and the run's
speed for its queue's clock. ``restore`` puts the command lines ``env up`` gave back. The
processes must come back healthy each time, and the scheduler must really back off in trace
time.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import pytest
import yaml
from kubernetes_asyncio import client, config

from simkube.core.flags import with_flags
from simkube.core.simtime import REAL_TIME, TimerSettings, TimeScale
from simkube.env import retiming, state
from simkube.env.lifecycle import running
from simkube.env.pacing import SPEED_VARIABLE
from simkube.env.paths import env_dir
from simkube.env.restarting import restart_record
from simkube.env.toolchain.catalog import KUBE_SCHEDULER
from tests.conftest import skctl
from tests.support.gotests import assert_go_tests_pass
from tests.support.kube import FAKE_TOLERATION, eventually

pytestmark = pytest.mark.integration
RUN_CONFIGMAP = "default/simkube-run-timescale"


def argv_of(name: str) -> dict[str, list[str]]:
    state = json.loads((env_dir(name) / "state.json").read_text())
    return {c["name"]: c["argv"] for c in state["components"]}


def test_a_run_retimes_the_control_plane_and_restore_undoes_it() -> None:
    name = f"retime-{os.getpid()}"
    skctl("env", "up", "--name", name)
    try:
        before = argv_of(name)
        settings = TimerSettings(values={"scheduler.podMaxBackoffSeconds": 40_000})
        restarted = retiming.retime(name, scale=TimeScale(20), settings=settings)
        assert restarted == ["kube-controller-manager", "kube-scheduler"]
        during = argv_of(name)
        # 15 s ÷ 20 less the HPA's own reconcile (12 ms) that the period waits for: 15,012 ÷ 20 - 12
        assert "--horizontal-pod-autoscaler-sync-period=739ms" in \
            during["kube-controller-manager"]
        scheduler = during["kube-scheduler"]
        assert f"{SPEED_VARIABLE}=20" in scheduler  # its queue's clock runs at the speed
        assert "--pod-max-in-unschedulable-pods-duration=300000ms" in scheduler  # trace time
        config_path = next(a for a in scheduler if a.startswith("--config=")).split("=", 1)[1]
        written = yaml.safe_load(Path(config_path).read_text())
        assert (written["podInitialBackoffSeconds"], written["podMaxBackoffSeconds"]) == (1, 40)
        assert written["leaderElection"] == {"leaderElect": False}  # the env's own kept
        assert retiming.retime(name, scale=TimeScale(20),
                               settings=settings) == []  # nothing to change
        assert json.loads(skctl("env", "status", "--name", name, "--json").stdout)["healthy"]
        assert sorted(retiming.restore(name)) == ["kube-controller-manager", "kube-scheduler"]
        assert argv_of(name) == before
        assert retiming.restore(name) == []
        assert json.loads(skctl("env", "status", "--name", name, "--json").stdout)["healthy"]
    finally:
        skctl("env", "down", "--name", name, check=False)


def test_the_scheduler_builds_go_tests_pass() -> None:
    assert_go_tests_pass(KUBE_SCHEDULER)  # its command, and the clocks shared with Karpenter


async def _seconds_to_bind_once_it_fits(kubeconfig: str, *, label: str) -> float:
    """Wall seconds from making a pod that failed to schedule fit to its binding: it waits out
    the backoff its failure earned (the node's label change moves it to the backoff queue)."""
    api = await config.new_client_from_config(config_file=kubeconfig)
    async with api:
        core = client.CoreV1Api(api)
        node = (await core.list_node()).items[0].metadata.name
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": label},
               "spec": {"containers": [{"name": "app", "image": "registry.example/app:1"}],
                        "tolerations": [FAKE_TOLERATION], "nodeSelector": {label: "yes"}}}
        await core.create_namespaced_pod("default", pod)

        async def unschedulable() -> bool:
            got = await core.read_namespaced_pod(label, "default")
            return any(c.type == "PodScheduled" and c.reason == "Unschedulable"
                       for c in got.status.conditions or [])

        await eventually(unschedulable, timeout=60, what=f"{label} to be Unschedulable")
        await core.patch_node(node, {"metadata": {"labels": {label: "yes"}}})
        fitting = time.monotonic()

        async def bound() -> bool:
            return bool((await core.read_namespaced_pod(label, "default")).spec.node_name)

        await eventually(bound, timeout=60, what=f"{label} to be bound", interval=0.05)
        return time.monotonic() - fitting


def _retime_observably(name: str, *, scale: TimeScale, settings: TimerSettings) -> None:
    """The run's scheduler, following the holds in RUN_CONFIGMAP, with the queue's
    pop-from-backoff gate off: on (upstream's default since 1.33), an idle scheduler takes a
    backing-off pod at once, so a lone pod would show no backoff at all; a busy one (a burst,
    a large replay) honours them."""
    retiming.retime(name, scale=scale, settings=settings, run_configmap=RUN_CONFIGMAP)
    with running(name, wait=retiming.LOCK_WAIT_S) as env:
        record = next(r for r in env.components if r.name == "kube-scheduler")
        restart_record(env, record, argv=with_flags(
            record.argv, flags={"feature-gates": "SchedulerPopFromBackoffQ=false"}))
        state.save(env)


async def _publish_hold(kubeconfig: str, *, seconds: float) -> None:
    """A hold of the run's clock as sk-ctrl publishes it ("start-expiry" in Unix ms; 0: none)."""
    now = int(time.time() * 1000)
    value = f"{now}-{now + int(seconds * 1000)}" if seconds else ""
    api = await config.new_client_from_config(config_file=kubeconfig)
    async with api:
        core = client.CoreV1Api(api)
        body = {"metadata": {"name": "simkube-run-timescale"}, "data": {"holding": value}}
        try:
            await core.patch_namespaced_config_map("simkube-run-timescale", "default", body)
        except client.ApiException as error:
            if error.status != 404:
                raise
            await core.create_namespaced_config_map("default", body)
    await asyncio.sleep(1.0)  # the scheduler's watch delivers it


async def test_a_paced_scheduler_backs_off_in_trace_time() -> None:
    # A 10 s backoff (initial and max) is 0.5 s of wall time at 20x on the queue's clock.
    # While sk-ctrl holds the run's clock it runs at real time, and at speed 1 (upstream's
    # behaviour) the 10 s are on the wall: the controls that show the measurement can tell
    # them apart. The hold also shows the scheduler may read the run's ConfigMap.
    name = f"paced-{os.getpid()}"
    skctl("env", "up", "--name", name, "--nodes", "1")
    try:
        kubeconfig = json.loads(skctl("env", "status", "--name", name, "--json").stdout)[
            "kubeconfig"]
        ten = TimerSettings(values={"scheduler.podInitialBackoffSeconds": 10_000,
                                    "scheduler.podMaxBackoffSeconds": 10_000})
        await _publish_hold(kubeconfig, seconds=0)
        # retime runs its own event loop (Karpenter's pools), so off this one
        await asyncio.to_thread(_retime_observably, name, scale=TimeScale(20), settings=ten)
        paced = await _seconds_to_bind_once_it_fits(kubeconfig, label="paced")
        assert paced < 4.0, f"a 10 s backoff at 20x took {paced:.1f} s of wall time"
        await _publish_hold(kubeconfig, seconds=60)
        held = await _seconds_to_bind_once_it_fits(kubeconfig, label="held")
        assert held > 5.0, f"a 10 s backoff during a hold took only {held:.1f} s"
        await _publish_hold(kubeconfig, seconds=0)
        await asyncio.to_thread(_retime_observably, name, scale=REAL_TIME, settings=ten)
        real = await _seconds_to_bind_once_it_fits(kubeconfig, label="real")
        assert real > 5.0, f"a 10 s backoff at speed 1 took only {real:.1f} s"
    finally:
        skctl("env", "down", "--name", name, check=False)
