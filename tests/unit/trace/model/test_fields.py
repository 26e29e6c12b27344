from __future__ import annotations

from typing import Any

import pytest

from simkube.trace import TraceFormatError
from simkube.trace.model.fields import (
    At,
    FieldTypeError,
    field_integer,
    field_list,
    field_map,
    field_optional_map,
    field_quantities,
    field_strings,
    json_kind,
    map_items,
)

pytestmark = pytest.mark.unit
AT = At("apps/v1.Deployment shop/web", "spec.template.spec")


def test_paths_are_spelled_only_when_asked_and_read_like_field_paths() -> None:
    assert (AT / "containers" / 0 / "ports" / 1).path == (
        "spec.template.spec.containers[0].ports[1]")
    assert (At("v1.Pod a/b") / "metadata" / "labels").path == "metadata.labels"
    assert At("x").path == ""
    assert repr(At("o") / "spec") == "At('o', 'spec')"


@pytest.mark.parametrize(("value", "kind"), [
    (None, "null"), (True, "a boolean"), ({}, "a map"), ([], "a list"), ("", "a string"),
    (1, "an integer"), (1.5, "a number"), (b"x", "binary data"), (object(), "a object")])
def test_json_kind_names_values_the_way_json_does(value: Any, kind: str) -> None:
    assert json_kind(value) == kind


def test_a_wrong_type_is_a_trace_format_error_naming_object_and_field() -> None:
    with pytest.raises(TraceFormatError) as caught:
        (AT / "tolerations").list({"key": "k"})
    error = caught.value
    assert isinstance(error, FieldTypeError)
    assert (error.owner, error.path) == ("apps/v1.Deployment shop/web",
                                         "spec.template.spec.tolerations")
    assert str(error) == ("apps/v1.Deployment shop/web: spec.template.spec.tolerations is a map, "
                          "not a list")


def test_value_reads_accept_null_and_the_right_type_only() -> None:
    assert AT.map(None) is None
    assert AT.map({"a": 1}) == {"a": 1}
    assert AT.list([1]) == [1]
    assert AT.integer(3) == 3
    assert AT.string("s") == "s"
    assert AT.strings({"a": "b"}) == {"a": "b"}
    assert AT.quantity("250m") == "250m"
    for read, value in ((AT.map, []), (AT.list, "x"), (AT.integer, True), (AT.integer, 1.0),
                        (AT.string, 3), (AT.strings, {"a": 1}), (AT.quantity, [[80]]),
                        (AT.quantity, "lots")):
        with pytest.raises(FieldTypeError):
            read(value)


def test_reads_by_key_create_skip_or_name_the_field() -> None:
    parent: dict[str, Any] = {"labels": None, "items": [{"a": 1}, {"b": 2}], "n": 2,
                              "requests": {"cpu": "1", "memory": None}}
    assert field_map(parent, "labels", AT) == {}
    assert parent["labels"] == {}
    assert field_list(parent, "absent", AT) == []
    assert "absent" not in parent
    assert field_optional_map(parent, "absent", AT) is None
    assert field_integer(parent, "n", AT) == 2
    field_strings(parent, "labels", AT)
    field_quantities(parent, "requests", AT)
    assert [(at.path, item) for at, item in map_items(parent, "items", AT)] == [
        ("spec.template.spec.items[0]", {"a": 1}), ("spec.template.spec.items[1]", {"b": 2})]
    wrong = {"labels": {"a": 7}, "items": [{"a": 1}, "x"], "n": "2", "m": [],
             "requests": {"cpu": {"a": 1}}}
    for read, key, path in ((field_strings, "labels", "labels.a"),
                            (map_items, "items", "items[1]"), (field_integer, "n", "n"),
                            (field_map, "m", "m"), (field_optional_map, "m", "m"),
                            (field_list, "n", "n"), (field_quantities, "requests",
                                                     "requests.cpu")):
        with pytest.raises(FieldTypeError) as caught:
            read(wrong, key, AT)
        assert caught.value.path == f"spec.template.spec.{path}"
