"""The wiring a dry run cannot see: every container argument is a flag its command accepts,
services listen where their Services point, Cluster Autoscaler reaches sk-cloudprov, and
the copies in deploy/ equal their sources.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from simkube.env.autoscalers.cluster_autoscaler import autoscaler_spec
from simkube.env.controlplane.components import Layout
from simkube.env.toolchain.cache import binary_path
from simkube.env.toolchain.catalog import Binary
from tests.integration.deploy.manifests import (
    CA_IN_CLUSTER_ONLY,
    IMAGE,
    NAMESPACE,
    OVERLAY_OF,
    OVERLAYS,
    PART_OF,
    PORTS,
    ROOT,
    VENV_BIN,
    containers,
    find,
    find_prefixed,
    flag_value,
    granted,
    help_flags,
    image_name,
    service_address,
)

pytestmark = pytest.mark.integration


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
    source = ROOT / "services" / "simkube" / "env" / "services" / "node-groups.yaml"
    assert groups == yaml.safe_load(source.read_text())
    # The group namespace exists, so the Roles bound in it can be created.
    find(objects, "Namespace", groups["namespace"])
    grants = granted(objects, "sk-ctrl")
    # Deployments: the node groups' (reset between runs) and the run's own (owed pods), read
    # together with ReplicaSets and Jobs only to hold the clock (ctrl/owed_pods.py).
    assert {r for (g, r) in grants if g == "apps"} == {"deployments", "replicasets"}
    assert grants[("apps", "replicasets")] == grants[("batch", "jobs")] == {"list", "watch"}


def test_copies_equal_their_sources(rendered: dict[str, list[dict[str, Any]]]) -> None:
    objects = rendered["sim"]
    stages = find_prefixed(objects, "ConfigMap", "kwok-config")["data"]["stages.yaml"]
    source_stages = ROOT / "services" / "simkube" / "env" / "controlplane" / "kwok-stages.yaml"
    assert list(yaml.safe_load_all(stages)) == list(yaml.safe_load_all(source_stages.read_text()))
    assert {d["kind"] for d in yaml.safe_load_all(stages)} == {"Stage"}
    for crd, source in (("simulations.simkube.dev", "ctrl/simulation-crd.yaml"),
                        ("simulationroots.simkube.dev", "driver/simulationroot-crd.yaml")):
        deployed = copy.deepcopy(find(objects, "CustomResourceDefinition", crd))
        expected = yaml.safe_load((ROOT / "services" / "simkube" / source).read_text())
        deployed["metadata"]["labels"].pop(PART_OF[0])
        expected["metadata"]["labels"].pop(PART_OF[0], None)
        assert deployed == expected, crd
