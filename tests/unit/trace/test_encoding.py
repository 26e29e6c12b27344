from __future__ import annotations

from typing import Any

import pytest

from simkube.trace import TraceFormatError
from simkube.trace.encoding import copy_value, pack_checked

pytestmark = pytest.mark.unit


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def test_copies_are_deep_and_survive_nesting_a_recursive_copy_would_not() -> None:
    original = {"a": [{"b": 1}], "deep": nested(900)}
    copied = copy_value(original, where="x")
    copied["a"][0]["b"] = 2
    assert original["a"][0]["b"] == 1
    depth, value = 0, copied["deep"]
    while isinstance(value, list):
        depth, value = depth + 1, value[0]
    assert depth == 900


@pytest.mark.parametrize(("value", "problem"), [
    ({1, 2}, "cannot be encoded"),
    (nested(5000), "nested too deeply"),
    (2**70, "cannot be encoded"),
    (object(), "cannot be encoded"),
])
def test_unencodable_values_are_trace_errors(value: Any, problem: str) -> None:
    with pytest.raises(TraceFormatError, match=problem) as caught:
        pack_checked(value, where="events[3]")
    assert caught.value.where == "events[3]"
