"""nodeBytes checked by a decoder that knows only the wire format and DESIGN.md's numbers.

The generated subset schema could agree with itself and still be wrong; this decoder shares
nothing with it. (tests/integration/cloudprov/test_nodeproto_apiserver.py goes further and
has a real API server decode the bytes.)
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest

from simkube.cloudprov.manifests import template_node
from simkube.cloudprov.nodeproto import encode_node
from simkube.gen.k8s.api.core.v1 import node_pb2
from tests.unit.cloudprov.fakes import NAMESPACE, make_config

pytestmark = pytest.mark.unit

Fields = dict[int, list[Any]]


def varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, at


def decode(data: bytes) -> Fields:
    """Field number -> values; length-delimited values stay bytes, varints become ints."""
    fields: Fields = defaultdict(list)
    at = 0
    while at < len(data):
        key, at = varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = varint(data, at)
            fields[number].append(value)
        elif wire == 2:
            size, at = varint(data, at)
            fields[number].append(data[at:at + size])
            at += size
        else:
            raise AssertionError(f"unexpected wire type {wire} for field {number}")
    return fields


def text(fields: Fields, number: int) -> str:
    return bytes(fields[number][0]).decode()


def string_map(entries: list[bytes]) -> dict[str, str]:
    return {text(decode(e), 1): text(decode(e), 2) for e in entries}


def quantity_map(entries: list[bytes]) -> dict[str, str]:
    return {text(decode(e), 1): text(decode(decode(e)[2][0]), 1) for e in entries}


def test_template_bytes_carry_design_field_numbers() -> None:
    config = make_config()
    manifest = template_node(config.groups["small"], namespace=NAMESPACE)
    node = decode(encode_node(manifest))
    assert set(node) == {1, 2, 3}
    metadata, spec, status = (decode(node[n][0]) for n in (1, 2, 3))

    assert text(metadata, 1) == "small-template"
    labels = string_map(metadata[11])
    assert labels["node.kubernetes.io/instance-type"] == "s2"
    assert labels["topology.kubernetes.io/zone"] == "z1"
    assert labels["kubernetes.io/os"] == "linux"
    assert labels["kubernetes.io/arch"] == "amd64"
    assert labels["simkube.dev/node-group"] == "small"
    assert string_map(metadata[12])["kwok.x-k8s.io/node"] == "fake"

    assert text(spec, 3) == "simkube://small-template"
    assert 4 not in spec  # schedulable: unschedulable=false is not sent
    taints = [(text(t, 1), text(t, 2), text(t, 3)) for t in map(decode, spec[5])]
    assert taints == [("team", "a", "NoSchedule"), ("kwok.x-k8s.io/node", "fake", "NoSchedule")]

    capacity = quantity_map(status[1])
    assert capacity == {"cpu": "2", "memory": "8Gi", "pods": "110", "ephemeral-storage": "100Gi"}
    assert quantity_map(status[2]) == capacity
    condition = decode(status[4][0])
    assert (text(condition, 1), text(condition, 2)) == ("Ready", "True")
    info = decode(status[7][0])
    assert (text(info, 7), text(info, 9), text(info, 10)) == ("v1.36.3", "linux", "amd64")


def test_every_manifest_field_survives_a_round_trip() -> None:
    config = make_config()
    manifest = template_node(config.groups["gpu"], namespace=NAMESPACE)
    manifest["spec"]["unschedulable"] = True
    node = node_pb2.Node.FromString(encode_node(manifest))
    assert node.metadata.name == manifest["metadata"]["name"]
    assert dict(node.metadata.labels) == manifest["metadata"]["labels"]
    assert dict(node.metadata.annotations) == manifest["metadata"]["annotations"]
    assert node.spec.providerID == manifest["spec"]["providerID"]
    assert node.spec.unschedulable
    assert [{"key": t.key, "value": t.value, "effect": t.effect} for t in node.spec.taints] == \
        manifest["spec"]["taints"]
    assert {k: q.string for k, q in node.status.capacity.items()} == \
        manifest["status"]["capacity"]
    assert node.status.capacity["nvidia.com/gpu"].string == "2"
    assert node.status.nodeInfo.architecture == "amd64"


def test_encoding_is_deterministic() -> None:
    config = make_config()
    manifest = template_node(config.groups["small"], namespace=NAMESPACE)
    assert encode_node(manifest) == encode_node(manifest)
