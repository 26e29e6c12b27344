"""Rendering deploy/ with the real kubectl, and the helpers the deploy tests share.

The contract the tests check lives here once: the ports per service (shared with the Tiltfile
and docs/deploy.md), the namespace, the labels, and how to read flags out of a --help.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

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


def bundle(text_objects: list[dict[str, Any]]) -> str:
    return yaml.safe_dump_all(text_objects, sort_keys=False)


def server_side_dry_run(kubectl: Path, kubeconfig: Path | str, objects: list[dict[str, Any]],
                        *, timeout: float = 120) -> None:
    """Apply ``objects`` with ``--server-side --dry-run=server`` and check that the API server
    answered for every one of them (kind.group/name), so none was silently dropped.

    ``--force-conflicts``: the shared test cluster may hold the same CRDs, installed by
    sk-driver or sk-ctrl tests under their own field managers; ownership is not what this
    checks.
    """
    out = run(kubectl, "--kubeconfig", kubeconfig, "apply", "--server-side",
              "--dry-run=server", "--force-conflicts", f"--field-manager={FIELD_MANAGER}",
              "-o", "name", "-f", "-", stdin=bundle(objects), timeout=timeout)
    applied = out.split()
    assert len(applied) == len(objects), out
    for o in objects:
        kind = o["kind"].lower()
        group = o["apiVersion"].split("/")[0] if "/" in o["apiVersion"] else ""
        assert f"{kind}{'.' + group if group else ''}/{o['metadata']['name']}" in applied


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



def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])



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
