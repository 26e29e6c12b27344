"""Restarts of the tracer and of the API server lose nothing and invent nothing."""

from __future__ import annotations

import asyncio
import base64
import os
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from kubernetes_asyncio import client, config

from tests.conftest import SimEnv, skctl
from tests.integration.tracer.conftest import TracerProcess, env_state, events_of
from tests.integration.tracer.test_recording import DEPLOYMENT, recorded
from tests.support.kube import deployment, eventually

pytestmark = pytest.mark.integration
MakeTracer = Callable[[dict[str, Any]], TracerProcess]


def _config(namespace: str) -> dict[str, Any]:
    return {"trackedObjects": {DEPLOYMENT: {"podSpecTemplatePaths": ["/spec/template"]},
                               "v1.Pod": {}},
            "namespaces": [namespace]}


@pytest.mark.parametrize("crash", [False, True], ids=["sigterm", "sigkill"])
async def test_tracer_restart_loses_nothing_and_duplicates_nothing(
        kube: client.ApiClient, namespace: str, tracer: MakeTracer, tmp_path: Path,
        crash: bool) -> None:
    process = tracer(_config(namespace))
    await process.start(watching=2)
    apps = client.AppsV1Api(kube)
    for name in ("a", "b"):
        await apps.create_namespaced_deployment(namespace, deployment(name, replicas=1))
    await recorded(process, DEPLOYMENT, 2)

    async def pods_recorded() -> bool:
        status = await process.status()
        return any(k.kind == "v1.Pod" and k.events_stored >= 2 for k in status.kinds)
    await eventually(pods_recorded, timeout=60, what="both pods recorded")
    if crash:
        await asyncio.sleep(1.5)  # the store flushes every second; a crash loses the rest
    process.stop(kill=crash)

    # While the tracer is away: a change, a deletion and a creation.
    await apps.patch_namespaced_deployment_scale("a", namespace, {"spec": {"replicas": 2}})
    await apps.delete_namespaced_deployment("b", namespace)
    await apps.create_namespaced_deployment(namespace, deployment("c", replicas=1))
    await process.start(watching=2)
    await recorded(process, DEPLOYMENT, 5)
    await apps.delete_namespaced_deployment("a", namespace)
    await recorded(process, DEPLOYMENT, 6)

    rows = events_of(process.export(tmp_path))
    key = f"{namespace}/"
    assert rows[:2] == [("apply", DEPLOYMENT, key + "a"), ("apply", DEPLOYMENT, key + "b")]
    # The re-list after the restart records exactly what changed while the tracer was away.
    assert sorted(rows[2:5]) == [("apply", DEPLOYMENT, key + "a"),
                                 ("apply", DEPLOYMENT, key + "c"),
                                 ("delete", DEPLOYMENT, key + "b")]
    assert rows[5:] == [("delete", DEPLOYMENT, key + "a")]
    # Unchanged pods are not applied again after the restart.
    pods = [row for row in events_of(process.export(tmp_path, "--kind", "v1.Pod"))
            if row[0] == "apply"]
    assert len(pods) == len(set(pods))
    assert len((await process.status()).kinds) == 2


@pytest.fixture
async def own_env(tmp_path: Path) -> AsyncIterator[tuple[SimEnv, client.ApiClient]]:
    """A private environment: this test restarts its API server."""
    name = f"trapi-{os.getpid()}"
    skctl("env", "up", "--name", name)
    try:
        state = env_state(name)
        env = SimEnv(name=name, kubeconfig=state["kubeconfig"], api_server=state["api_server"])
        api = await config.new_client_from_config(config_file=env.kubeconfig)
        async with api:
            yield env, api
    finally:
        skctl("env", "down", "--name", name, check=False)


async def _restart_apiserver(env: SimEnv, log: Path) -> subprocess.Popen[bytes]:
    """Compact etcd to its current revision, then kill kube-apiserver and start it again with
    the same argv (SIGKILL: a graceful stop waits for every open watch)."""
    state = env_state(env.name)
    etcd = f"http://127.0.0.1:{state['ports']['etcd_client']}"
    async with httpx.AsyncClient(base_url=etcd, timeout=10) as http:
        head = (await http.post("/v3/kv/range",
                                json={"key": base64.b64encode(b"/").decode()})).json()
        revision = int(head["header"]["revision"])
        compacted = await http.post("/v3/kv/compaction",
                                    json={"revision": revision, "physical": True})
        compacted.raise_for_status()
    component = next(c for c in state["components"] if c["name"] == "kube-apiserver")
    return _respawn(component["pid"], component["argv"], log)


def _respawn(pid: int, argv: list[str], log: Path) -> subprocess.Popen[bytes]:
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
        time.sleep(0.05)
    with log.open("ab") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)


async def test_apiserver_restart_after_compaction_records_no_spurious_deletes(
        own_env: tuple[SimEnv, client.ApiClient], tracer: MakeTracer, tmp_path: Path) -> None:
    env, api = own_env
    namespace = "restarts"
    await client.CoreV1Api(api).create_namespace({"metadata": {"name": namespace}})
    process = tracer(_config(namespace))
    process.kubeconfig = env.kubeconfig
    await process.start(watching=2)
    apps = client.AppsV1Api(api)
    for name in ("a", "b"):
        await apps.create_namespaced_deployment(namespace, deployment(name, replicas=1))
    await recorded(process, DEPLOYMENT, 2)

    apiserver = await _restart_apiserver(env, tmp_path / "apiserver.log")
    try:
        await process.wait_watching(2, resyncs=1)  # every kind re-listed after reconnecting
        await apps.patch_namespaced_deployment_scale("a", namespace, {"spec": {"replicas": 3}})
        await apps.delete_namespaced_deployment("b", namespace)
        await recorded(process, DEPLOYMENT, 4)
        status = await process.status()
        rows = events_of(process.export(tmp_path))
        key = f"{namespace}/"
        assert rows == [("apply", DEPLOYMENT, key + "a"), ("apply", DEPLOYMENT, key + "b"),
                        ("apply", DEPLOYMENT, key + "a"), ("delete", DEPLOYMENT, key + "b")]
        assert all(kind.resyncs >= 1 for kind in status.kinds)
    finally:
        process.stop()
        apiserver.kill()
        apiserver.wait(timeout=30)
