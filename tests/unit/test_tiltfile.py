"""The Tiltfile, evaluated by a Starlark interpreter with strict stand-ins for Tilt's built-ins.

No Tilt, cluster or container engine: the checks are that the Tiltfile calls Tilt the way Tilt
accepts, and that everything it names (files, overlays, workloads, ports) exists and agrees
with deploy/.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.unit.tilt.fake import (
    TRIGGER_MODE_MANUAL,
    FakeTilt,
    Step,
    TiltfileError,
    render_kustomization,
)

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
TILTFILE = REPO / "Tiltfile"
SIM, PROD = "deploy/overlays/sim", "deploy/overlays/prod"
GRPC_PORTS = {"sk-tracer": 50051, "sk-driver": 50052, "sk-cloudprov": 50053, "sk-ctrl": 50054}


def evaluate(source: str | None = None, **options: Any) -> FakeTilt:
    tilt = FakeTilt(REPO, **options)
    tilt.evaluate(TILTFILE.read_text() if source is None else source)
    return tilt


@pytest.fixture(scope="module")
def tilt() -> FakeTilt:
    return evaluate()


@pytest.fixture(scope="module")
def with_tracer() -> FakeTilt:
    return evaluate(flags={"tracer": True})


def overlay_objects(overlay: str) -> list[dict[str, Any]]:
    """The overlay's objects straight from deploy/, independent of the Tiltfile."""
    return render_kustomization(REPO / overlay)


def deployments(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {obj["metadata"]["name"]: obj for obj in objects if obj.get("kind") == "Deployment"}


def containers(deployment: dict[str, Any]) -> list[dict[str, Any]]:
    return list(deployment["spec"]["template"]["spec"]["containers"])


def image_of(tilt: FakeTilt) -> dict[str, Any]:
    assert len(tilt.images) == 1, "one image for every service"
    return tilt.images[0]


def steps(tilt: FakeTilt, kind: str) -> list[Step]:
    return [step for step in image_of(tilt)["live_update"] if step.kind == kind]


def local_resource(tilt: FakeTilt, name: str) -> dict[str, Any]:
    return next(resource for resource in tilt.local_resources if resource["name"] == name)


# --- the cluster it may touch -----------------------------------------------------------------

def test_only_the_kind_cluster_is_allowed(tilt: FakeTilt) -> None:
    assert tilt.allowed_contexts == ["kind-simkube"]


@pytest.mark.parametrize("context", ["docker-desktop", "kind-other", "gke_prod_cluster"])
def test_other_contexts_are_refused(context: str) -> None:
    refusal = f"deploys only to the kind cluster kind-simkube .*not to {context}"
    with pytest.raises(TiltfileError, match=refusal):
        evaluate(context=context)


def test_local_only_needs_no_cluster() -> None:
    local = evaluate(context="some-prod-cluster", flags={"local-only": True})
    assert not local.images
    assert not local.objects
    assert not local.k8s_resources
    assert not local.allowed_contexts
    assert {r["name"] for r in local.local_resources} == {
        "proto", "lint", "unit-tests", "env-up", "env-down"}


# --- the image ----------------------------------------------------------------------------------

def test_image_is_built_from_deploy_dockerfile(tilt: FakeTilt) -> None:
    image = image_of(tilt)
    assert image["ref"] == "simkube-py"
    assert image["context"] == "."
    assert (REPO / image["dockerfile"]).is_file()
    # Every workload that runs simkube-py names this image (any tag: Tilt matches by name).
    refs = {c["image"].split(":")[0] for d in deployments(overlay_objects(SIM)).values()
            for c in containers(d) if c["image"].split(":")[0] == "simkube-py"}
    assert refs == {"simkube-py"}


def test_build_context_holds_everything_the_dockerfile_copies(tilt: FakeTilt) -> None:
    only = image_of(tilt)["only"]
    assert all((REPO / path).exists() for path in only), only
    dockerfile = (REPO / image_of(tilt)["dockerfile"]).read_text()
    copied = []
    for line in dockerfile.splitlines():
        words = line.split()
        if words[:1] == ["COPY"] and not any(w.startswith("--from") for w in words):
            copied.extend(words[1:-1])
    assert copied, "deploy/Dockerfile copies nothing from the context?"
    for source in copied:
        assert any(Path(source).is_relative_to(path) for path in only), (source, only)


def test_live_update_syncs_existing_sources_into_the_image_layout(tilt: FakeTilt) -> None:
    syncs = steps(tilt, "sync")
    assert [(s.args["local_path"], s.args["remote_path"]) for s in syncs] == [
        ("./services", "/app/services")]
    for step in syncs:
        assert (REPO / step.args["local_path"]).is_dir()
    # The image keeps the source where the sync writes it.
    dockerfile = (REPO / "deploy/Dockerfile").read_text()
    assert "WORKDIR /app" in dockerfile
    assert "COPY services ./services" in dockerfile


def test_dependency_and_proto_changes_rebuild_the_image(tilt: FakeTilt) -> None:
    (fall_back,) = steps(tilt, "fall_back_on")
    paths = fall_back.args["paths"]
    assert "pyproject.toml" in paths
    assert "proto" in paths
    for path in paths:
        assert (REPO / path).exists(), path
        assert any(Path(path).is_relative_to(p) for p in image_of(tilt)["only"]), path


# --- the overlays and their workloads ---------------------------------------------------------

def test_sim_overlay_is_loaded_and_prod_only_with_the_flag(
        tilt: FakeTilt, with_tracer: FakeTilt) -> None:
    assert tilt.kustomized == [SIM]
    assert with_tracer.kustomized == [SIM, PROD]
    for overlay in (SIM, PROD):
        assert (REPO / overlay / "kustomization.yaml").is_file()
    assert "sk-tracer" not in {r["workload"] for r in tilt.k8s_resources}
    assert "sk-tracer" in {r["workload"] for r in with_tracer.k8s_resources}


@pytest.mark.parametrize("flags", [{}, {"tracer": True}])
def test_every_resource_is_a_deployment_of_the_overlays_and_every_deployment_has_one(
        flags: dict[str, bool]) -> None:
    tilt = evaluate(flags=flags)
    overlays = [SIM, PROD] if flags else [SIM]
    expected = {name: d for overlay in overlays
                for name, d in deployments(overlay_objects(overlay)).items()}
    assert {r["workload"] for r in tilt.k8s_resources} == set(expected)
    assert {"sk-driver", "sk-cloudprov", "sk-ctrl", "cluster-autoscaler",
            "kwok-controller"} <= set(expected)
    for deployment in expected.values():
        assert deployment["metadata"]["namespace"] == "simkube-system"


def test_port_forwards_are_declared_container_ports_on_unique_local_ports(
        with_tracer: FakeTilt) -> None:
    objects = overlay_objects(SIM) + overlay_objects(PROD)
    local_ports: list[int] = []
    for resource in with_tracer.k8s_resources:
        name = resource["workload"]
        declared = {port["containerPort"] for c in containers(deployments(objects)[name])
                    for port in c.get("ports", [])}
        forwards = resource["port_forwards"]
        assert forwards, f"{name} has no port forward"
        for forward in forwards:
            assert forward.container_port in declared, (name, forward, declared)
        local_ports.extend(forward.local_port for forward in forwards)
        if name in GRPC_PORTS:
            assert any(f.local_port == f.container_port == GRPC_PORTS[name] for f in forwards)
    assert len(local_ports) == len(set(local_ports)), sorted(local_ports)


def test_services_wait_for_proto_and_carry_labels(with_tracer: FakeTilt) -> None:
    for resource in with_tracer.k8s_resources:
        assert resource["labels"], resource["workload"]
        if resource["workload"].startswith("sk-"):
            assert resource["resource_deps"] == ["proto"]
    defined = {r["name"] for r in with_tracer.local_resources}
    for resource in with_tracer.k8s_resources:
        assert set(resource["resource_deps"]) <= defined


# --- local resources ------------------------------------------------------------------------------

def test_proto_regenerates_with_make_when_proto_changes(tilt: FakeTilt) -> None:
    proto = local_resource(tilt, "proto")
    assert "make proto" in proto["cmd"]
    assert "proto" in proto["deps"]
    assert "proto:" in (REPO / "Makefile").read_text()
    for path in proto["deps"]:
        assert (REPO / path).exists(), path


def test_checks_and_local_environment_buttons(tilt: FakeTilt) -> None:
    for name in ("lint", "unit-tests"):
        assert local_resource(tilt, name)["resource_deps"] == ["proto"]
    up, down = local_resource(tilt, "env-up"), local_resource(tilt, "env-down")
    assert up["cmd"] == ".venv/bin/skctl env up --name tilt --services"
    assert down["cmd"] == ".venv/bin/skctl env down --name tilt"
    for button in (up, down):
        assert button["trigger_mode"] == TRIGGER_MODE_MANUAL
        assert button["auto_init"] is False


# --- the restart loop that makes live updates take effect -----------------------------------------

def test_simkube_containers_keep_their_command_under_the_restart_loop(tilt: FakeTilt) -> None:
    original = deployments(overlay_objects(SIM))
    deployed = deployments(tilt.objects)
    wrapped = 0
    for name, deployment in original.items():
        for before, after in zip(containers(deployment), containers(deployed[name]),
                                 strict=True):
            if before["image"].split(":")[0] != "simkube-py":
                assert after == before
                continue
            wrapped += 1
            assert after["command"][:2] == ["/bin/sh", "-c"]
            assert after["command"][4:] == before.get("command", [])
            assert after.get("args") == before.get("args")
    assert wrapped >= 3


def _loop_and_restart(tilt: FakeTilt, state: Path) -> tuple[str, str]:
    deployed = deployments(tilt.objects)["sk-driver"]
    loop = containers(deployed)[0]["command"][2]
    (run_step,) = steps(tilt, "run")
    restart = run_step.args["cmd"]
    return (loop.replace("/tmp/", f"{state}/"), restart.replace("/tmp/", f"{state}/"))


def _wait_for(predicate: Any, what: str) -> None:
    deadline = time.monotonic() + 10
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


SERVICE = """
import pathlib, signal, sys, time
log = pathlib.Path(sys.argv[1])
log.write_text(log.read_text() + "start\\n" if log.exists() else "start\\n")
signal.signal(signal.SIGTERM, lambda *_: sys.exit(int(sys.argv[2])))
time.sleep(60)
"""


def test_restart_loop_restarts_in_place_and_passes_sigterm_on(
        tilt: FakeTilt, tmp_path: Path) -> None:
    loop, restart = _loop_and_restart(tilt, tmp_path)
    log = tmp_path / "starts"
    process = subprocess.Popen(
        ["/bin/sh", "-c", loop, "sk-restart-loop", sys.executable, "-c", SERVICE, str(log), "7"])
    try:
        _wait_for(lambda: log.exists() and (tmp_path / "sk-service.pid").exists(), "start")
        subprocess.run(["/bin/sh", "-c", restart], check=True)
        _wait_for(lambda: log.read_text().count("start") == 2, "restart")
        assert process.poll() is None, "a requested restart must not end the container"
        os.kill(process.pid, signal.SIGTERM)
        assert process.wait(timeout=10) == 7  # the service's own graceful exit status
    finally:
        if process.poll() is None:
            process.kill()


def test_restart_loop_lets_a_crash_end_the_container(tilt: FakeTilt, tmp_path: Path) -> None:
    loop, _ = _loop_and_restart(tilt, tmp_path)
    crash = "import sys; sys.exit(3)"
    result = subprocess.run(["/bin/sh", "-c", loop, "sk-restart-loop", sys.executable, "-c",
                             crash], timeout=10, check=False)
    assert result.returncode == 3


# --- the stand-ins are strict ---------------------------------------------------------------------

@pytest.mark.parametrize(("original", "broken", "error"), [
    ("port_forwards=", "port_forward=", "unexpected keyword argument 'port_forward'"),
    ("live_update=", "liveupdate=", "unexpected keyword argument 'liveupdate'"),
    ("resource_deps=['proto'],\n    labels=['checks']",
     "resource_dep=['proto'],\n    labels=['checks']", "unexpected keyword argument"),
    ("docker_build(\n        IMAGE,\n        '.',", "docker_build(\n        IMAGE,",
     "missing argument for context"),
    ("local_resource(\n    'proto',", "local_resourse(\n    'proto',", "local_resourse"),
    ("k8s_resource(\n            name,", "k8s_resource(\n            'sk-nope',",
     "no workload named 'sk-nope'"),
])
def test_a_broken_copy_of_the_tiltfile_fails(original: str, broken: str, error: str) -> None:
    source = TILTFILE.read_text()
    assert original in source
    with pytest.raises(TiltfileError, match=error):
        evaluate(source.replace(original, broken, 1))


def test_an_unknown_builtin_fails() -> None:
    source = TILTFILE.read_text() + "\nhelm_resource('x', 'chart')\n"
    with pytest.raises(TiltfileError, match="helm_resource"):
        evaluate(source)

