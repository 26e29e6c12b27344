"""The chart's copies stay the files they copy (Helm reads nothing outside the chart's
directory, so its CRDs and KWOK files are copies), and its defaults are the overlays' and
the local environment's settings.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from simkube.cloudprov.config import GROUP_KEYS, TOP_KEYS, load_file
from simkube.env.autoscalers.karpenter_catalog import Disruption, instance_types, manifests

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[3]
CHART = ROOT / "deploy" / "helm" / "simkube"
SERVICES = ROOT / "services" / "simkube"
COPIES = {  # the chart's file -> the files it must equal byte for byte
    "crds/simulation.yaml": ("deploy/crds/simulation.yaml", "ctrl/simulation-crd.yaml"),
    "crds/simulationroot.yaml": ("deploy/crds/simulationroot.yaml",
                                 "driver/simulationroot-crd.yaml"),
    "files/stages.yaml": ("deploy/kwok/stages.yaml", "env/controlplane/kwok-stages.yaml"),
    "files/kwok.yaml": ("deploy/kwok/kwok.yaml",),
}


def _values() -> dict[str, Any]:
    return yaml.safe_load((CHART / "values.yaml").read_text())


@pytest.mark.parametrize("copy", sorted(COPIES))
def test_copies_are_byte_identical(copy: str) -> None:
    for source in COPIES[copy]:
        path = ROOT / source if source.startswith("deploy/") else SERVICES / source
        assert (CHART / copy).read_bytes() == path.read_bytes(), (
            f"{copy} differs from {source}: cp {path.relative_to(ROOT)} "
            f"{(CHART / copy).relative_to(ROOT)}")


def test_node_groups_are_the_overlays() -> None:
    overlay = yaml.safe_load((ROOT / "deploy/overlays/sim/node-groups.yaml").read_text())
    assert {"namespace": _values()["cloudprov"]["groupNamespace"],
            **_values()["cloudprov"]["nodeGroups"]} == overlay


def test_tracer_config_is_the_overlays() -> None:
    overlay = yaml.safe_load((ROOT / "deploy/overlays/prod/tracer.yaml").read_text())
    assert _values()["tracer"]["config"] == overlay


def test_karpenter_example_is_what_the_local_environment_makes() -> None:
    """Karpenter faces the catalogue Cluster Autoscaler does: the example's instance types,
    node classes and NodePools are karpenter_catalog's for the chart's node groups."""
    example = yaml.safe_load((CHART / "examples/karpenter.yaml").read_text())["karpenter"]
    config = load_file(ROOT / "deploy/overlays/sim/node-groups.yaml")
    made = manifests(config, disruption=Disruption())
    assert example["instanceTypes"] == json.loads(json.dumps(instance_types(config)))
    assert example["nodeClasses"] == [{"name": m["metadata"]["name"], "spec": m["spec"]}
                                      for m in made if m["kind"] == "KWOKNodeClass"]
    assert example["nodePools"] == [{"name": m["metadata"]["name"], "spec": m["spec"]}
                                    for m in made if m["kind"] == "NodePool"]


def test_schema_is_strict_at_every_level() -> None:
    """Every object the schema describes with properties refuses other keys, so a typo in a
    values file fails at install rather than being ignored (if/then parts only add
    conditions to an object described elsewhere)."""
    schema = json.loads((CHART / "values.schema.json").read_text())

    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            if "properties" in node and not {"if", "then"} & set(where.split("/")):
                assert node.get("additionalProperties") is False, where
            for name, child in node.items():
                walk(child, f"{where}/{name}")
        elif isinstance(node, list):
            for index, child in enumerate(node):
                walk(child, f"{where}/{index}")
    walk(schema, "")
    assert set(schema["properties"]) - {"global"} == set(_values())


def test_schema_node_groups_take_only_what_sk_cloudprov_reads() -> None:
    schema = json.loads((CHART / "values.schema.json").read_text())
    top = schema["properties"]["cloudprov"]["properties"]["nodeGroups"]
    assert set(top["properties"]) <= set(TOP_KEYS) - {"namespace"}  # groupNamespace's
    assert set(top["properties"]["nodeGroups"]["items"]["properties"]) <= set(GROUP_KEYS)
