from __future__ import annotations

from typing import Any

import pytest

from simkube.trace import ObjectRef, TraceFormatError
from simkube.trace.model.objects import check_object, check_ref, kind_key, labels_of, namespace_of
from tests.unit.trace.conftest import pod

pytestmark = pytest.mark.unit


def test_check_object_returns_its_reference() -> None:
    assert check_object(pod("a", "ns"), where="x") == ObjectRef(
        api_version="v1", kind="Pod", namespace="ns", name="a")


@pytest.mark.parametrize(("obj", "problem"), [
    ([], "expected a Kubernetes object"),
    ({"kind": "Pod", "metadata": {"name": "a"}}, "apiVersion must be a non-empty string"),
    ({"apiVersion": "v1", "kind": 3, "metadata": {"name": "a"}}, "kind must be"),
    ({"apiVersion": "v1", "kind": "Pod"}, "metadata must be a map"),
    ({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": ""}}, "metadata.name"),
    ({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": 1}},
     "metadata.namespace"),
])
def test_check_object_rejects_unusable_identity(obj: Any, problem: str) -> None:
    with pytest.raises(TraceFormatError, match=problem) as caught:
        check_object(obj, where="events[3]")
    assert caught.value.where == "events[3]"


def test_check_ref_rejects_a_body_that_is_another_object() -> None:
    with pytest.raises(TraceFormatError, match=r"object body is v1\.Pod ns/b"):
        check_ref(ObjectRef.of(pod("a", "ns")), pod("b", "ns"), where="record 1")


def test_accessors_tolerate_malformed_metadata() -> None:
    assert kind_key(pod()) == "v1.Pod"
    assert labels_of(pod("x")) == {"app": "x"}
    assert labels_of({"metadata": {"labels": "nope"}}) == {}
    assert namespace_of({"metadata": {}}) == ""
