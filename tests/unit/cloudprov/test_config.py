from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from simkube.cloudprov.config import DEFAULT_GPU_LABEL, from_configmap, load_file
from simkube.core.errors import ConfigError
from tests.unit.cloudprov.fakes import make_config

pytestmark = pytest.mark.unit

DATA = Path(__file__).parent / "data"
SHAPE = {"cpu": 2, "memory": "4Gi", "instanceType": "t", "zone": "z"}


def write(tmp_path: Path, groups: list[dict[str, object]], **top: object) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({**top, "nodeGroups": groups}))
    return path


def test_every_template_form_and_the_defaults(tmp_path: Path) -> None:
    shutil.copy(DATA / "m5-node.yaml", tmp_path / "m5.yaml")
    node = yaml.safe_load((DATA / "m5-node.yaml").read_text())
    config = load_file(write(tmp_path, [
        {"id": "from-file", "maxSize": 3, "nodeFile": "m5.yaml"},
        {"id": "inline", "minSize": 1, "maxSize": 2, "pricePerHour": 0.384, "node": node},
        {"id": "short", "maxSize": 10, "shape": SHAPE},
    ]))
    assert list(config.groups) == ["from-file", "inline", "short"]
    assert config.namespace == "sk-cloudprov"
    assert config.infra_node == "sk-cloudprov-infra"
    assert config.gpu_label == DEFAULT_GPU_LABEL
    assert config.gpu_types == ()
    assert config.groups["from-file"].template == config.groups["inline"].template
    inline = config.groups["inline"]
    assert (inline.min_size, inline.max_size, inline.price_per_hour) == (1, 2, 0.384)
    assert config.groups["short"].min_size == 0


def test_gpu_types_default_to_the_types_groups_use() -> None:
    config = make_config("""
gpu: {label: gpu/type}
nodeGroups:
- {id: a, maxSize: 1, shape: {cpu: 1, memory: 1Gi, instanceType: t, zone: z, gpu: {type: t4}}}
- {id: b, maxSize: 1, shape: {cpu: 1, memory: 1Gi, instanceType: t, zone: z, gpu: {type: t4}}}
""")
    assert config.gpu_label == "gpu/type"
    assert config.gpu_types == ("t4",)
    assert make_config().gpu_types == ("t4", "a100")


@pytest.mark.parametrize(("groups", "message"), [
    ([], r"config\.yaml: nodeGroups: must list at least one node group"),
    ([{"id": "a", "shape": SHAPE}], r"node group 'a': maxSize: is required"),
    ([{"id": "a", "minSize": 3, "maxSize": 2, "shape": SHAPE}],
     r"node group 'a': maxSize: 2 is below minSize 3"),
    ([{"id": "a", "minSize": -1, "maxSize": 2, "shape": SHAPE}],
     r"node group 'a': minSize: must be between 0 and"),
    ([{"id": "a", "maxSize": "ten", "shape": SHAPE}],
     r"node group 'a': maxSize: must be an integer, not a string"),
    ([{"id": "a", "maxsize": 2, "shape": SHAPE}],
     r"node group 'a': maxsize: unknown field \(did you mean 'maxSize'\?\)"),
    ([{"id": "Big_Nodes", "maxSize": 1, "shape": SHAPE}],
     r"nodeGroups\[0\]: id: 'Big_Nodes' must be lowercase"),
    ([{"maxSize": 1, "shape": SHAPE}], r"nodeGroups\[0\]: id: is required"),
    ([{"id": "a", "maxSize": 1, "shape": SHAPE}, {"id": "a", "maxSize": 1, "shape": SHAPE}],
     r"nodeGroups\[1\]: id 'a' is used twice"),
    ([{"id": "a", "maxSize": 1}], r"node group 'a': node: give exactly one of node, nodeFile, "
                                  r"shape \(found none\)"),
    ([{"id": "a", "maxSize": 1, "shape": SHAPE, "nodeFile": "x.yaml"}],
     r"give exactly one of .* \(found nodeFile, shape\)"),
    ([{"id": "a", "maxSize": 1, "nodeFile": "missing.yaml"}],
     r"node group 'a': nodeFile .*missing\.yaml does not exist"),
    ([{"id": "a", "maxSize": 1, "pricePerHour": -1, "shape": SHAPE}],
     r"node group 'a': pricePerHour: must be between 0"),
    ([{"id": "a", "maxSize": 1, "shape": {**SHAPE, "memory": "lots"}}],
     r"node group 'a': shape\.memory: 'lots' is not a quantity"),
    ([{"id": "a", "maxSize": 1, "shape": SHAPE, "options": {"scaleDownUnneededDuration": "5x"}}],
     r"node group 'a': options\.scaleDownUnneededDuration: '5x' is not a duration"),
    ([{"id": "a", "maxSize": 1, "shape": SHAPE,
       "options": {"scaleDownUtilizationThreshold": 1.5}}],
     r"options\.scaleDownUtilizationThreshold: must be between 0 and 1, not 1\.5"),
])
def test_bad_configs_name_the_group_and_field(tmp_path: Path, groups: list[dict[str, object]],
                                              message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_file(write(tmp_path, groups))


@pytest.mark.parametrize(("top", "message"), [
    ({"namespace": "Bad NS"}, r"namespace: 'Bad NS' is not a valid namespace name"),
    ({"infraNode": "a_b"}, r"infraNode: 'a_b' is not a valid node name"),
    ({"gpu": {"types": ["a100"]}}, r"node group 'a': GPU type 't4' is not in gpu\.types"),
    ({"nodegroups": []}, r"nodegroups: unknown field \(did you mean 'nodeGroups'\?\)"),
])
def test_bad_top_level_fields(tmp_path: Path, top: dict[str, object], message: str) -> None:
    shape = {**SHAPE, "gpu": {"type": "t4"}}
    with pytest.raises(ConfigError, match=message):
        load_file(write(tmp_path, [{"id": "a", "maxSize": 1, "shape": shape}], **top))


def test_not_yaml_is_reported_with_its_place(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("nodeGroups: [\n")
    with pytest.raises(ConfigError, match=r"config file .* is not valid YAML at line"):
        load_file(path)


def test_configmap_keys_serve_as_node_files() -> None:
    node = (DATA / "m5-node.yaml").read_text()
    config = from_configmap({
        "config.yaml": "nodeGroups: [{id: m5, maxSize: 4, nodeFile: m5.yaml}]",
        "m5.yaml": node}, namespace="ops", name="groups")
    assert config.groups["m5"].template.labels["node.kubernetes.io/instance-type"] == "m5.2xlarge"


@pytest.mark.parametrize(("data", "message"), [
    ({}, r"ConfigMap ops/groups has no key 'config\.yaml' \(keys: none\)"),
    ({"config.yaml": "nodeGroups: [{id: m5, maxSize: 4, nodeFile: m5.yaml}]"},
     r"ConfigMap ops/groups key config\.yaml: node group 'm5': nodeFile: .*no key 'm5\.yaml'"),
    ({"config.yaml": "- a list"}, r"must be a YAML mapping"),
    ({"config.yaml": "nodeGroups: ["}, r"is not valid YAML"),
])
def test_bad_configmaps(data: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        from_configmap(data, namespace="ops", name="groups")
