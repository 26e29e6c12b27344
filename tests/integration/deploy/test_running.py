"""The manifests' commands run for real: sk-tracer and sk-cloudprov with their manifest's
arguments under a token of their own ServiceAccount (so their roles are proven sufficient,
not just valid), and kwok with the rendered config.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
import yaml
from grpc_health.v1 import health_pb2, health_pb2_grpc

from simkube.env.toolchain.cache import binary_path
from simkube.env.toolchain.catalog import Binary
from simkube.gen.simkube.tracer.v1 import tracer_pb2, tracer_pb2_grpc
from tests.conftest import SimEnv
from tests.integration.deploy.manifests import (
    FIELD_MANAGER,
    NAMESPACE,
    VENV_BIN,
    bundle,
    containers,
    find,
    find_prefixed,
    free_port,
    granted,
    image_name,
    run,
)

pytestmark = pytest.mark.integration


def test_tracer_config_kinds_are_all_readable(
        kubectl: Path, sim_env: SimEnv, rendered: dict[str, list[dict[str, Any]]]) -> None:
    """Every kind sk-tracer is configured to track has get, list and watch in its role."""
    objects = rendered["prod"]
    config_map = find_prefixed(objects, "ConfigMap", "sk-tracer-config")
    tracked = yaml.safe_load(config_map["data"]["tracer.yaml"])["trackedObjects"]
    allowed = granted(objects, "sk-tracer")
    for key in tracked:
        api_version, kind = key.rsplit(".", 1)
        path = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
        resources = json.loads(run(kubectl, "--kubeconfig", sim_env.kubeconfig, "get",
                                   "--raw", path))["resources"]
        plural = next(r["name"] for r in resources if r["kind"] == kind and "/" not in r["name"])
        group = api_version.split("/")[0] if "/" in api_version else ""
        assert {"get", "list", "watch"} <= allowed.get((group, plural), set()), key


def test_kwok_starts_with_the_rendered_config(
        sim_env: SimEnv, rendered: dict[str, list[dict[str, Any]]], tmp_path: Path) -> None:
    """The real kwok v0.8.0 loads the ConfigMap's files (options + stages) and turns healthy.

    It manages no node here (an annotation no node has), so the environment's own kwok is
    undisturbed; v0.8.0 refuses to start when it finds no stages."""
    objects = rendered["sim"]
    _, container = next((d, c) for d, c in containers(objects)
                        if image_name(c) == "registry.k8s.io/kwok/kwok")
    config_map = find_prefixed(objects, "ConfigMap", "kwok-config")
    mount = next(m["mountPath"] for m in container["volumeMounts"] if m["name"] == "config")
    configs = []
    for arg in container["args"]:
        if arg.startswith("--config="):
            path = Path(arg.split("=", 1)[1])
            assert path.parent == Path(mount)
            (tmp_path / path.name).write_text(config_map["data"][path.name])
            configs.append(f"--config={tmp_path / path.name}")
    assert len(configs) == 2
    port = free_port()
    log = (tmp_path / "kwok.log").open("w")
    process = subprocess.Popen(
        [str(binary_path(Binary.KWOK)), f"--kubeconfig={sim_env.kubeconfig}", *configs,
         "--manage-all-nodes=false",
         "--manage-nodes-with-annotation-selector=simkube.dev/deploy-test=none",
         f"--server-address=127.0.0.1:{port}", "--cidr=100.64.0.1/16"],
        stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        healthy = False
        while time.monotonic() < deadline and process.poll() is None and not healthy:
            try:
                healthy = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).is_success
            except httpx.TransportError:
                time.sleep(0.2)
        assert healthy, (tmp_path / "kwok.log").read_text()[-3000:]
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.close()


def test_tracer_runs_with_the_manifests_config_args_and_rbac(
        account_kubeconfig: Callable[[str, str], Path], rendered: dict[str, list[dict[str, Any]]],
        tmp_path: Path) -> None:
    """The real sk-tracer, with the manifest's arguments, the rendered config and only its
    ServiceAccount's rights, serves and watches every configured kind.

    sk-tracer checks every flag value and its config before it starts (exit 2 on a mistake),
    so this proves more than --help can: retention values parse, the config's kinds resolve,
    and the read-only role is enough to list and watch all of them. Paths and addresses are
    moved from the pod's to this machine's."""
    tracer_kubeconfig = account_kubeconfig("prod", "sk-tracer")
    objects = rendered["prod"]
    (container,) = find(objects, "Deployment", "sk-tracer", NAMESPACE)[
        "spec"]["template"]["spec"]["containers"]
    config_map = find_prefixed(objects, "ConfigMap", "sk-tracer-config")
    (tmp_path / "tracer.yaml").write_text(config_map["data"]["tracer.yaml"])
    tracked = len(yaml.safe_load(config_map["data"]["tracer.yaml"])["trackedObjects"])
    port = free_port()
    moved = {"--store": str(tmp_path / "store"), "--config": str(tmp_path / "tracer.yaml"),
             "--listen": f"127.0.0.1:{port}", "--metrics-listen": f"127.0.0.1:{free_port()}"}
    args = [f"{name}={moved[name]}" if name in moved else arg
            for arg in container["args"] for name in [arg.split("=", 1)[0]]]
    assert len([a for a in args if a.split("=", 1)[0] in moved]) == len(moved)
    log_path = tmp_path / "sk-tracer.log"
    log = log_path.open("w")
    process = subprocess.Popen(
        [str(VENV_BIN / container["command"][0]), f"--kubeconfig={tracer_kubeconfig}",
         *args], stdout=log, stderr=subprocess.STDOUT)
    watching = tracer_pb2.WATCH_STATE_WATCHING
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            health = health_pb2_grpc.HealthStub(channel)
            tracer = tracer_pb2_grpc.TracerStub(channel)
            deadline = time.monotonic() + 40
            kinds: list[Any] = []
            while time.monotonic() < deadline and process.poll() is None:
                try:
                    serving = health.Check(health_pb2.HealthCheckRequest(), timeout=1).status
                    kinds = list(tracer.GetStatus(tracer_pb2.GetStatusRequest(),
                                                  timeout=2).kinds)
                except grpc.RpcError:
                    time.sleep(0.2)
                    continue
                if serving == health_pb2.HealthCheckResponse.SERVING and len(kinds) >= tracked \
                        and all(k.state == watching for k in kinds):
                    break
                time.sleep(0.3)
            states = {k.kind: (tracer_pb2.WatchState.Name(k.state), k.last_error)
                      for k in kinds}
            assert len(kinds) >= tracked, (states, log_path.read_text()[-3000:])
            assert all(k.state == watching for k in kinds), states
            assert not any(k.last_error for k in kinds), states
    finally:
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=30)
        log.close()
    assert code == 0, log_path.read_text()[-3000:]


def test_cloudprov_starts_with_the_manifests_args_and_rbac(
        account_kubeconfig: Callable[[str, str], Path], kubectl: Path, sim_env: SimEnv,
        rendered: dict[str, list[dict[str, Any]]], tmp_path: Path) -> None:
    """The real sk-cloudprov, with the manifest's arguments and only its ServiceAccount's
    rights, reads its node groups from the overlay's ConfigMap, creates the infrastructure
    node and the group Deployments, lists its watches and turns SERVING (it opens its port
    only after all of that succeeded; a 403 anywhere stops it with a message)."""
    objects = rendered["sim"]
    admin = ("--kubeconfig", sim_env.kubeconfig)
    config_map = find(objects, "ConfigMap", "sk-node-groups", NAMESPACE)
    groups = yaml.safe_load(config_map["data"]["config.yaml"])
    run(kubectl, *admin, "apply", "--server-side", f"--field-manager={FIELD_MANAGER}",
        "-f", "-", stdin=bundle([config_map]))
    kubeconfig = account_kubeconfig("sim", "sk-cloudprov")
    (container,) = find(objects, "Deployment", "sk-cloudprov", NAMESPACE)[
        "spec"]["template"]["spec"]["containers"]
    port = free_port()
    moved = {"--listen": f"127.0.0.1:{port}", "--metrics-listen": f"127.0.0.1:{free_port()}"}
    args = [f"{name}={moved[name]}" if name in moved else arg
            for arg in container["args"] for name in [arg.split("=", 1)[0]]]
    log_path = tmp_path / "sk-cloudprov.log"
    log = log_path.open("w")
    process = subprocess.Popen(
        [str(VENV_BIN / container["command"][0]), f"--kubeconfig={kubeconfig}", *args],
        stdout=log, stderr=subprocess.STDOUT)
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            health = health_pb2_grpc.HealthStub(channel)
            deadline = time.monotonic() + 40
            serving = None
            while time.monotonic() < deadline and process.poll() is None:
                try:
                    serving = health.Check(health_pb2.HealthCheckRequest(), timeout=1).status
                except grpc.RpcError:
                    time.sleep(0.3)
                    continue
                if serving == health_pb2.HealthCheckResponse.SERVING:
                    break
            assert serving == health_pb2.HealthCheckResponse.SERVING, \
                log_path.read_text()[-3000:]
        # The run ConfigMap is watched by name (a resourceNames rule grants that only with a
        # metadata.name field selector): no refusal in the log once the watch has started.
        time.sleep(1.0)
        assert "the run ConfigMap" not in log_path.read_text(), log_path.read_text()[-3000:]
        deployments = run(kubectl, *admin, "get", "deployments", "-n", groups["namespace"],
                          "-o", "name").split()
        assert sorted(deployments) == sorted(
            f"deployment.apps/{g['id']}" for g in groups["nodeGroups"])
    finally:
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=30)
        log.close()
        # Leave the shared cluster as it was: the group Deployments, then the fake Nodes
        # (nobody recreates them once sk-cloudprov is gone).
        run(kubectl, *admin, "delete", "deployments", "--all", "-n", groups["namespace"],
            "--wait=true", "--timeout=60s")
        run(kubectl, *admin, "delete", "nodes", "-l",
            f"simkube.dev/node-group-namespace={groups['namespace']}", "--wait=true",
            "--timeout=60s")
        run(kubectl, *admin, "delete", "node", "sk-cloudprov-infra", "--ignore-not-found")
        run(kubectl, *admin, "delete", "-f", "-", "--ignore-not-found",
            stdin=bundle([config_map]))
    assert code == 0, log_path.read_text()[-3000:]


# --- on the rendered objects -------------------------------------------------------------
