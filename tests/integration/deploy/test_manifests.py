"""The deploy/ overlays, rendered by the real kubectl and checked against a real API server.

Every object of both overlays goes through ``kubectl apply --server-side --dry-run=server``
(schema validation, defaulting, admission, RBAC escalation checks), and the semantic facts a
dry run cannot see are asserted on the rendered objects: every argument a container gets is
a flag its command really accepts (``--help`` of the installed console scripts and of the
cached kwok binary), least-privilege RBAC without wildcards, the wiring between Cluster
Autoscaler, sk-cloudprov and sk-ctrl, and the copies that must stay equal to their sources.
sk-tracer and sk-cloudprov are started for real with their manifest's arguments under a
token of their own ServiceAccount, so their roles are proven sufficient, not just valid.
"""

from __future__ import annotations

import copy
import json
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
import yaml
from grpc_health.v1 import health_pb2, health_pb2_grpc

from simkube.env.autoscaler import autoscaler_spec
from simkube.env.cache import binary_path
from simkube.env.catalog import Binary
from simkube.env.components import Layout
from simkube.gen.simkube.tracer.v1 import tracer_pb2, tracer_pb2_grpc
from tests.conftest import SimEnv

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "deploy"
OVERLAYS = ("prod", "sim")
VENV_BIN = Path(sys.executable).parent
IMAGE = "simkube-py"
NAMESPACE = "simkube-system"
PART_OF = ("app.kubernetes.io/part-of", "simkube")
FIELD_MANAGER = "simkube-deploy-test"
# The contract with the Tiltfile and docs/deploy.md: gRPC and metrics port per service.
PORTS = {"sk-tracer": (50051, 9101), "sk-driver": (50052, 9102),
         "sk-cloudprov": (50053, 9103), "sk-ctrl": (50054, 9104)}
OVERLAY_OF = {"sk-tracer": "prod", "sk-driver": "sim", "sk-cloudprov": "sim", "sk-ctrl": "sim"}
CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding",
                  "CustomResourceDefinition"}
# Cluster Autoscaler flags that differ from the local environment's on purpose: files and
# addresses inside the pod, the in-cluster account instead of a kubeconfig, and the namespace
# of its status ConfigMap (the local environment has no such namespace question).
CA_IN_CLUSTER_ONLY = {"--cloud-config", "--kubeconfig", "--address", "--namespace"}
# An option line of click's or cobra's --help: a short indent, then the option's spelling up
# to two spaces or the end of the line ("  -c, --config strings   ...",
# "  --log-json / --log-console   ..."); deeper-indented lines continue a description.
OPTION_LINE = re.compile(r"^ {1,8}(-.*?)(?: {2,}|$)", re.MULTILINE)
FLAG = re.compile(r"(?<![\w-])(--[a-z0-9][a-z0-9-]*)")


def run(*argv: str | Path, stdin: str | None = None, timeout: float = 60) -> str:
    result = subprocess.run([str(a) for a in argv], input=stdin, capture_output=True,
                            text=True, timeout=timeout, check=False)
    assert result.returncode == 0, (f"{' '.join(map(str, argv))} failed "
                                    f"({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result.stdout


@pytest.fixture(scope="module")
def kubectl() -> Path:
    return binary_path(Binary.KUBECTL)


@pytest.fixture(scope="module")
def rendered(kubectl: Path) -> dict[str, list[dict[str, Any]]]:
    return {overlay: [doc for doc in yaml.safe_load_all(
                run(kubectl, "kustomize", DEPLOY / "overlays" / overlay)) if doc]
            for overlay in OVERLAYS}


def bundle(text_objects: list[dict[str, Any]]) -> str:
    return yaml.safe_dump_all(text_objects, sort_keys=False)


def find(objects: list[dict[str, Any]], kind: str, name: str,
         namespace: str | None = None) -> dict[str, Any]:
    found = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name
             and o["metadata"].get("namespace") == namespace]
    assert len(found) == 1, f"expected one {kind} {namespace}/{name}, found {len(found)}"
    return found[0]


def find_prefixed(objects: list[dict[str, Any]], kind: str, prefix: str) -> dict[str, Any]:
    """A generated ConfigMap: its name carries a content hash after the prefix."""
    found = [o for o in objects if o["kind"] == kind
             and re.fullmatch(rf"{re.escape(prefix)}(-[a-z0-9]{{10}})?", o["metadata"]["name"])]
    assert len(found) == 1, f"expected one {kind} {prefix}*, found {len(found)}"
    return found[0]


def containers(objects: list[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    for deployment in (o for o in objects if o["kind"] == "Deployment"):
        for container in deployment["spec"]["template"]["spec"]["containers"]:
            yield deployment, container


def image_name(container: dict[str, Any]) -> str:
    """``registry/path/name:tag`` -> ``registry/path/name``."""
    image = str(container["image"])
    return image.rsplit(":", 1)[0] if ":" in image.rsplit("/", 1)[-1] else image


def flag_value(args: list[str], flag: str) -> str:
    values = [a.split("=", 1)[1] for a in args if a.startswith(f"{flag}=")]
    assert len(values) == 1, f"{flag} given {len(values)} times in {args}"
    return values[0]


def help_flags(*argv: str | Path) -> set[str]:
    text = run(*argv, "--help")
    flags = {flag for spec in OPTION_LINE.findall(text) for flag in FLAG.findall(spec)}
    assert "--help" in flags, text  # the parse found the options at all
    return flags


# --- against the API server -------------------------------------------------------------


@pytest.fixture(scope="module")
def namespaces_for_dry_run(kubectl: Path, sim_env: SimEnv,
                           rendered: dict[str, list[dict[str, Any]]]) -> Iterator[None]:
    """Create the overlays' namespaces for real, for the length of the module.

    A dry run creates nothing, and the API server refuses objects in a namespace that does
    not exist (NamespaceLifecycle admission), so a bundle holding its own Namespace cannot be
    dry-run on its own. Only the namespaces this module created are removed afterwards."""
    wanted = {o["metadata"]["name"] for objects in rendered.values() for o in objects
              if o["kind"] == "Namespace"}
    existing = set(run(kubectl, "--kubeconfig", sim_env.kubeconfig, "get", "namespaces",
                       "-o", "name").split())
    created = sorted(n for n in wanted if f"namespace/{n}" not in existing)
    if created:
        run(kubectl, "--kubeconfig", sim_env.kubeconfig, "apply", "--server-side",
            f"--field-manager={FIELD_MANAGER}", "-f", "-",
            stdin=bundle([{"apiVersion": "v1", "kind": "Namespace",
                           "metadata": {"name": n}} for n in created]))
    try:
        yield
    finally:
        if created:
            run(kubectl, "--kubeconfig", sim_env.kubeconfig, "delete", "namespace", *created,
                "--wait=true", "--timeout=60s")


@pytest.mark.usefixtures("namespaces_for_dry_run")
@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_object_passes_a_server_side_dry_run(
        overlay: str, kubectl: Path, sim_env: SimEnv,
        rendered: dict[str, list[dict[str, Any]]]) -> None:
    objects = rendered[overlay]
    # The bundle holds no custom resources (KWOK's stages travel in a ConfigMap), so nothing
    # depends on a CRD the dry run does not really create.
    served = {"v1", "apps/v1", "rbac.authorization.k8s.io/v1", "networking.k8s.io/v1",
              "apiextensions.k8s.io/v1"}
    assert {o["apiVersion"] for o in objects} <= served
    # --force-conflicts: the shared test cluster may hold the same CRDs, installed by
    # sk-driver or sk-ctrl tests under their own field managers; ownership is not what this
    # checks.
    out = run(kubectl, "--kubeconfig", sim_env.kubeconfig, "apply", "--server-side",
              "--dry-run=server", "--force-conflicts", f"--field-manager={FIELD_MANAGER}",
              "-o", "name", "-f", "-", stdin=bundle(objects))
    applied = out.split()
    assert len(applied) == len(objects), out
    for o in objects:
        kind = o["kind"].lower()
        group = o["apiVersion"].split("/")[0] if "/" in o["apiVersion"] else ""
        assert f"{kind}{'.' + group if group else ''}/{o['metadata']['name']}" in applied


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


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def account_kubeconfig(kubectl: Path, sim_env: SimEnv, namespaces_for_dry_run: None,
                       rendered: dict[str, list[dict[str, Any]]],
                       tmp_path: Path) -> Iterator[Callable[[str, str], Path]]:
    """Kubeconfigs that authenticate as one of the overlays' ServiceAccounts.

    The account and the roles bound to it are created for real (and deleted after), and a
    token is requested for it, so a service runs with exactly the rights its manifest
    grants: too little shows as a 403 from the API server."""
    admin = ("--kubeconfig", sim_env.kubeconfig)
    created: list[str] = []

    def make(overlay: str, account: str) -> Path:
        objects = rendered[overlay]
        bindings = [o for o in objects if o["kind"] in ("RoleBinding", "ClusterRoleBinding")
                    and any(s["name"] == account for s in o["subjects"])]
        refs = {(b["roleRef"]["kind"], b["metadata"].get("namespace")
                 if b["roleRef"]["kind"] == "Role" else None, b["roleRef"]["name"])
                for b in bindings}
        rbac = bundle([find(objects, "ServiceAccount", account, NAMESPACE), *(
            o for o in objects if o["kind"] in ("Role", "ClusterRole")
            and (o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) in refs),
            *bindings])
        run(kubectl, *admin, "apply", "--server-side", f"--field-manager={FIELD_MANAGER}",
            "-f", "-", stdin=rbac)
        created.append(rbac)
        token = run(kubectl, *admin, "create", "token", account, "-n", NAMESPACE,
                    "--duration=10m").strip()
        config = yaml.safe_load(Path(sim_env.kubeconfig).read_text())
        config["users"] = [{"name": account, "user": {"token": token}}]
        for context in config["contexts"]:
            context["context"]["user"] = account
        path = tmp_path / f"{account}.kubeconfig"
        path.write_text(yaml.safe_dump(config))
        return path
    try:
        yield make
    finally:
        for rbac in created:
            run(kubectl, *admin, "delete", "--ignore-not-found", "-f", "-", stdin=rbac)


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


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_objects_are_namespaced_and_labelled(
        overlay: str, rendered: dict[str, list[dict[str, Any]]]) -> None:
    for o in rendered[overlay]:
        meta = o["metadata"]
        where = f"{o['kind']} {meta['name']}"
        # No namespace transformer: a namespaced object without one would land in whatever
        # namespace the user's kubeconfig defaults to.
        assert (o["kind"] in CLUSTER_SCOPED) == ("namespace" not in meta), where
        assert meta.get("labels", {}).get(PART_OF[0]) == PART_OF[1], where


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_deployments_use_existing_service_accounts_and_bindings(
        overlay: str, rendered: dict[str, list[dict[str, Any]]]) -> None:
    objects = rendered[overlay]
    accounts = {(o["metadata"]["namespace"], o["metadata"]["name"])
                for o in objects if o["kind"] == "ServiceAccount"}
    for deployment in (o for o in objects if o["kind"] == "Deployment"):
        spec = deployment["spec"]["template"]["spec"]
        assert (deployment["metadata"]["namespace"], spec["serviceAccountName"]) in accounts
        assert deployment["spec"]["replicas"] == 1
    roles = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"])
             for o in objects if o["kind"] in ("Role", "ClusterRole")}
    for binding in (o for o in objects if o["kind"] in ("RoleBinding", "ClusterRoleBinding")):
        ref = binding["roleRef"]
        namespace = binding["metadata"].get("namespace") if ref["kind"] == "Role" else None
        assert (ref["kind"], namespace, ref["name"]) in roles, binding["metadata"]["name"]
        for subject in binding["subjects"]:
            assert subject["kind"] == "ServiceAccount"
            assert (subject["namespace"], subject["name"]) in accounts


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_rbac_has_no_wildcards(overlay: str, rendered: dict[str, list[dict[str, Any]]]) -> None:
    for role in (o for o in rendered[overlay] if o["kind"] in ("Role", "ClusterRole")):
        for rule in role["rules"]:
            for field in ("verbs", "resources", "apiGroups"):
                assert "*" not in rule.get(field, []), (role["metadata"]["name"], rule)
            assert "nonResourceURLs" not in rule
            # resourceNames cannot restrict create, list or watch; a rule that pretends to
            # would silently grant nothing.
            if rule.get("resourceNames"):
                assert not {"create", "list", "watch"} & set(rule["verbs"]), rule


def granted(objects: list[dict[str, Any]], account: str) -> dict[tuple[str, str], set[str]]:
    """(apiGroup, resource) -> verbs of every role bound to the account, in any namespace."""
    roles = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o
             for o in objects if o["kind"] in ("Role", "ClusterRole")}
    verbs: dict[tuple[str, str], set[str]] = {}
    for binding in (o for o in objects if o["kind"] in ("RoleBinding", "ClusterRoleBinding")):
        if not any(s["name"] == account for s in binding["subjects"]):
            continue
        ref = binding["roleRef"]
        namespace = binding["metadata"].get("namespace") if ref["kind"] == "Role" else None
        for rule in roles[(ref["kind"], namespace, ref["name"])]["rules"]:
            for group in rule["apiGroups"]:
                for resource in rule["resources"]:
                    verbs.setdefault((group, resource), set()).update(rule["verbs"])
    return verbs


def test_tracer_is_read_only(rendered: dict[str, list[dict[str, Any]]]) -> None:
    allowed = granted(rendered["prod"], "sk-tracer")
    assert allowed
    assert set().union(*allowed.values()) <= {"get", "list", "watch"}
    assert not any("/" in resource for _, resource in allowed)  # no subresources either


def test_prod_overlay_holds_only_the_tracer(rendered: dict[str, list[dict[str, Any]]]) -> None:
    assert [d["metadata"]["name"] for d in rendered["prod"]
            if d["kind"] == "Deployment"] == ["sk-tracer"]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_container_args_are_flags_the_commands_accept(
        overlay: str, rendered: dict[str, list[dict[str, Any]]]) -> None:
    checked = 0
    for deployment, container in containers(rendered[overlay]):
        args = [str(a) for a in container.get("args", [])]
        if image_name(container) == IMAGE:
            command = container["command"]
            assert len(command) == 1
            script = VENV_BIN / command[0]
            assert script.exists(), f"{command[0]} is no console script of the project"
            # Group options, then an optional subcommand, then its options. Flags are
            # written --flag=value, so the only bare word is the subcommand.
            words = [a for a in args if not a.startswith("-")]
            assert len(words) <= 1, args
            if words:
                split = args.index(words[0])
                scopes = [((), args[:split]), ((words[0],), args[split + 1:])]
            else:
                scopes = [((), args)]
            for scope, scope_args in scopes:
                accepted = help_flags(script, *scope)
                for arg in scope_args:
                    assert arg.startswith("--"), arg
                    assert arg.split("=", 1)[0] in accepted, (
                        f"{deployment['metadata']['name']}: {command[0]} {' '.join(scope)} "
                        f"has no flag {arg.split('=', 1)[0]}")
            checked += 1
        elif image_name(container) == "registry.k8s.io/kwok/kwok":
            accepted = help_flags(binary_path(Binary.KWOK))
            for arg in args:
                assert arg.split("=", 1)[0] in accepted, arg
            checked += 1
    assert checked == {"prod": 1, "sim": 4}[overlay]


@pytest.mark.parametrize("service", sorted(PORTS))
def test_services_listen_on_all_interfaces_at_their_ports(
        service: str, rendered: dict[str, list[dict[str, Any]]]) -> None:
    objects = rendered[OVERLAY_OF[service]]
    grpc_port, metrics_port = PORTS[service]
    deployment = find(objects, "Deployment", service, NAMESPACE)
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert image_name(container) == IMAGE
    assert container["command"] == [service]
    args = container["args"]
    assert flag_value(args, "--listen") == f"0.0.0.0:{grpc_port}"
    assert flag_value(args, "--metrics-listen") == f"0.0.0.0:{metrics_port}"
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"grpc": grpc_port, "metrics": metrics_port}
    probes = [container[p] for p in ("startupProbe", "readinessProbe", "livenessProbe")
              if p in container]
    assert len(probes) >= 2
    assert all(p["grpc"]["port"] == grpc_port for p in probes)
    svc = find(objects, "Service", service, NAMESPACE)
    assert {(p["port"], p["targetPort"]) for p in svc["spec"]["ports"]} == {
        (grpc_port, "grpc"), (metrics_port, "metrics")}
    selector = deployment["spec"]["selector"]["matchLabels"]
    assert svc["spec"]["selector"] == selector
    assert deployment["spec"]["template"]["metadata"]["labels"].items() >= selector.items()


def service_address(objects: list[dict[str, Any]], address: str) -> tuple[str, int]:
    """``name.namespace.svc:port`` -> the container (deployment name, container port) it
    reaches through the Service in the bundle."""
    host, port = address.rsplit(":", 1)
    name, namespace, suffix = host.split(".", 2)
    assert suffix in ("svc", "svc.cluster.local"), address
    svc = find(objects, "Service", name, namespace)
    (target,) = [p["targetPort"] for p in svc["spec"]["ports"] if p["port"] == int(port)]
    for deployment, container in containers(objects):
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        if deployment["metadata"]["namespace"] == namespace and \
                labels.items() >= svc["spec"]["selector"].items():
            ports = {p["name"]: p["containerPort"] for p in container["ports"]}
            return deployment["metadata"]["name"], ports[target]
    raise AssertionError(f"no Deployment behind {address}")


def test_autoscaler_reaches_cloudprov(rendered: dict[str, list[dict[str, Any]]]) -> None:
    objects = rendered["sim"]
    deployment = find(objects, "Deployment", "cluster-autoscaler", NAMESPACE)
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "registry.k8s.io/autoscaling/cluster-autoscaler:v1.36.1"
    args = container["args"]
    assert flag_value(args, "--cloud-provider") == "externalgrpc"
    config_path = Path(flag_value(args, "--cloud-config"))
    (mount,) = [m for m in container["volumeMounts"] if Path(m["mountPath"]) ==
                config_path.parent]
    (volume,) = [v for v in deployment["spec"]["template"]["spec"]["volumes"]
                 if v["name"] == mount["name"]]
    config_map = find(objects, "ConfigMap", volume["configMap"]["name"], NAMESPACE)
    cloud_config = yaml.safe_load(config_map["data"][config_path.name])
    assert set(cloud_config) == {"address", "grpc_timeout"}  # no cert: plaintext
    assert service_address(objects, cloud_config["address"]) == ("sk-cloudprov", 50053)
    assert flag_value(args, "--namespace") == NAMESPACE
    assert service_address(objects, flag_value(find(objects, "Deployment", "sk-ctrl",
                                                    NAMESPACE)["spec"]["template"]["spec"]
                                               ["containers"][0]["args"], "--driver")) == (
        "sk-driver", 50052)


def test_autoscaler_flags_match_the_local_environment(
        rendered: dict[str, list[dict[str, Any]]], tmp_path: Path) -> None:
    """The same CA tuning as ``skctl env up --autoscaler`` (services/simkube/env/autoscaler.py)."""
    deployment = find(rendered["sim"], "Deployment", "cluster-autoscaler", NAMESPACE)
    deployed = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    local = autoscaler_spec(binary=Path("/ca"), layout=Layout(root=tmp_path), port=1).argv[1:]

    def pairs(args: list[str]) -> set[str]:
        return {a for a in args if a.split("=", 1)[0] not in CA_IN_CLUSTER_ONLY}
    assert pairs(deployed) == pairs(local)


def test_node_groups_config_map_is_the_local_environments(
        rendered: dict[str, list[dict[str, Any]]]) -> None:
    objects = rendered["sim"]
    refs = set()
    for _, container in containers(objects):
        refs |= {a.split("=", 1)[1] for a in container.get("args", [])
                 if a.split("=", 1)[0] in ("--config", "--node-groups")
                 and "configmap:" in a}
    assert refs == {f"configmap:{NAMESPACE}/sk-node-groups"}
    config_map = find(objects, "ConfigMap", "sk-node-groups", NAMESPACE)
    groups = yaml.safe_load(config_map["data"]["config.yaml"])
    source = ROOT / "services" / "simkube" / "env" / "node-groups.yaml"
    assert groups == yaml.safe_load(source.read_text())
    # The group namespace exists, so the Roles bound in it can be created.
    find(objects, "Namespace", groups["namespace"])
    assert {"deployments"} == {r for (g, r) in granted(objects, "sk-ctrl") if g == "apps"}


def test_copies_equal_their_sources(rendered: dict[str, list[dict[str, Any]]]) -> None:
    objects = rendered["sim"]
    stages = find_prefixed(objects, "ConfigMap", "kwok-config")["data"]["stages.yaml"]
    source_stages = ROOT / "services" / "simkube" / "env" / "kwok-stages.yaml"
    assert list(yaml.safe_load_all(stages)) == list(yaml.safe_load_all(source_stages.read_text()))
    assert {d["kind"] for d in yaml.safe_load_all(stages)} == {"Stage"}
    for crd, source in (("simulations.simkube.dev", "ctrl/simulation-crd.yaml"),
                        ("simulationroots.simkube.dev", "driver/simulationroot-crd.yaml")):
        deployed = copy.deepcopy(find(objects, "CustomResourceDefinition", crd))
        expected = yaml.safe_load((ROOT / "services" / "simkube" / source).read_text())
        deployed["metadata"]["labels"].pop(PART_OF[0])
        expected["metadata"]["labels"].pop(PART_OF[0], None)
        assert deployed == expected, crd
