from __future__ import annotations

from pathlib import Path

import pytest

from simkube.core.errors import ConfigError
from simkube.env.controlplane.nodes import load_template, node_names, render_node

pytestmark = pytest.mark.unit


def test_default_template_renders_a_fake_node() -> None:
    node = render_node(load_template(None), name="kwok-node-7")
    assert node["metadata"]["name"] == "kwok-node-7"
    assert node["metadata"]["labels"]["kubernetes.io/hostname"] == "kwok-node-7"
    assert node["spec"]["providerID"] == "kwok://kwok-node-7"
    assert node["metadata"]["annotations"]["kwok.x-k8s.io/node"] == "fake"
    assert [t["key"] for t in node["spec"]["taints"]] == ["kwok.x-k8s.io/node"]


def test_minimal_template_gets_annotation_and_taint(tmp_path: Path) -> None:
    source = tmp_path / "n.yaml"
    source.write_text("apiVersion: v1\nkind: Node\nmetadata: {labels: {a: b}}\n")
    node = render_node(load_template(source), name="n1")
    assert node["metadata"]["annotations"] == {"kwok.x-k8s.io/node": "fake"}
    assert node["spec"]["taints"][0]["effect"] == "NoSchedule"


def test_template_of_wrong_kind_is_rejected(tmp_path: Path) -> None:
    source = tmp_path / "n.yaml"
    source.write_text("apiVersion: v1\nkind: Pod\n")
    with pytest.raises(ConfigError, match="has kind 'Pod'; expected 'Node'"):
        load_template(source)


def test_node_names_are_numbered() -> None:
    assert node_names(3) == ["kwok-node-0", "kwok-node-1", "kwok-node-2"]
