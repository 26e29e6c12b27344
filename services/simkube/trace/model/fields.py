"""Typed reads of the fields inside object bodies, where a wrong type is the trace's fault.

Readers vouch for an object's identity (``objects.check_object``); the rest of the body is
whatever the recorded cluster, or whoever edited the file, wrote. Tools and the driver
interpret parts of it (pod templates, containers, ports, resources, env, volumes, labels,
replicas), and a list where a map belongs must end as a message naming the object and the
field, never as a ``TypeError`` from the line that happened to touch it. So every such read
goes through an ``At``: it knows where the value sits and raises ``FieldTypeError`` (a
``TraceFormatError``) saying what was expected. ``validate`` turns the same error into a
finding, so a user sees it before replaying.

Absent and null mean the same (SimKube's JSON traces write empty maps as null).
"""

from __future__ import annotations

from typing import Any

from simkube.core.quantities import is_quantity
from simkube.trace.errors import TraceFormatError


def json_kind(value: Any) -> str:
    """How a message names a value's type: JSON's words, since traces are JSON documents."""
    if value is None or isinstance(value, bool):
        return "null" if value is None else "a boolean"
    names = {dict: "a map", list: "a list", str: "a string", int: "an integer",
             float: "a number", bytes: "binary data"}
    return next((name for kind, name in names.items() if isinstance(value, kind)),
                f"a {type(value).__name__}")


class FieldTypeError(TraceFormatError):
    """A field the tools interpret holds the wrong type; names the object and field path."""

    def __init__(self, *, owner: str, path: str, expected: str, value: Any) -> None:
        self.owner = owner
        self.path = path
        self.problem = f"{path} is {json_kind(value)}, not {expected}"
        super().__init__(self.problem, where=owner)


class At:
    """A place in one object's body: ``owner`` names the object, ``path`` the field.

    Validating a large trace steps into millions of fields and almost never needs a path, so
    a child only links to its parent; ``path`` is spelled out when an error asks for it."""

    __slots__ = ("_base", "_key", "_parent", "owner")

    def __init__(self, owner: str, path: str = "") -> None:
        self.owner = owner
        self._base = path
        self._parent: At | None = None
        self._key: str | int = ""

    def __truediv__(self, key: str | int) -> At:
        child = At.__new__(At)
        child.owner = self.owner
        child._base = ""
        child._parent = self
        child._key = key
        return child

    def __repr__(self) -> str:
        return f"At({self.owner!r}, {self.path!r})"

    @property
    def path(self) -> str:
        if self._parent is None:
            return self._base
        parent, key = self._parent.path, self._key
        if isinstance(key, int):
            return f"{parent}[{key}]"
        return f"{parent}.{key}" if parent else key

    def wrong(self, value: Any, expected: str) -> FieldTypeError:
        return FieldTypeError(owner=self.owner, path=self.path, expected=expected, value=value)

    def map(self, value: Any) -> dict[str, Any] | None:
        if value is None or isinstance(value, dict):
            return value
        raise self.wrong(value, "a map")

    def list(self, value: Any) -> list[Any] | None:
        if value is None or isinstance(value, list):
            return value
        raise self.wrong(value, "a list")

    def integer(self, value: Any) -> int | None:
        if value is None or (isinstance(value, int) and not isinstance(value, bool)):
            return value
        raise self.wrong(value, "an integer")

    def string(self, value: Any) -> str | None:
        if value is None or isinstance(value, str):
            return value
        raise self.wrong(value, "a string")

    def quantity(self, value: Any) -> Any:
        """A resource quantity (``250m``, ``2``, ``512Mi``), returned as written."""
        if value is None or is_quantity(value):
            return value
        raise self.wrong(value, "a resource quantity")

    def strings(self, value: Any) -> dict[str, str] | None:
        """A map of strings (labels, annotations, a node selector)."""
        found = self.map(value)
        for key, item in (found or {}).items():
            if not isinstance(item, str):
                raise (self / key).wrong(item, "a string")
        return found


def field_map(parent: dict[str, Any], key: str, at: At) -> dict[str, Any]:
    """``parent[key]`` as a map, created when absent or null; another type raises."""
    value = parent.get(key)
    if isinstance(value, dict):
        return value
    if value is not None:
        raise (at / key).wrong(value, "a map")
    value = parent[key] = {}
    return value


def field_list(parent: dict[str, Any], key: str, at: At) -> list[Any]:
    """``parent[key]`` as a list (absent or null: empty, not stored); another type raises."""
    value = parent.get(key)
    if isinstance(value, list):
        return value
    if value is not None:
        raise (at / key).wrong(value, "a list")
    return []


def map_items(parent: dict[str, Any], key: str, at: At) -> list[tuple[At, dict[str, Any]]]:
    """The entries of a list of maps (containers, env, volumes), each with its place."""
    where = at / key
    items = []
    for index, item in enumerate(field_list(parent, key, at)):
        if not isinstance(item, dict):
            raise (where / index).wrong(item, "a map")
        items.append((where / index, item))
    return items


# The same reads by parent and key: checking a large trace reads millions of fields, and these
# build the field's place only when it is wrong.

def field_optional_map(parent: dict[str, Any], key: str, at: At) -> dict[str, Any] | None:
    value = parent.get(key)
    if value is None or isinstance(value, dict):
        return value
    raise (at / key).wrong(value, "a map")


def field_strings(parent: dict[str, Any], key: str, at: At) -> None:
    """Check that ``parent[key]``, if present, is a map of strings (labels, a selector)."""
    value = parent.get(key)
    if value is None or (isinstance(value, dict)
                         and all(isinstance(item, str) for item in value.values())):
        return
    (at / key).strings(value)


def field_integer(parent: dict[str, Any], key: str, at: At) -> int | None:
    value = parent.get(key)
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise (at / key).wrong(value, "an integer")


def field_quantities(parent: dict[str, Any], key: str, at: At) -> None:
    """Check that ``parent[key]``, if present, maps resource names to quantities."""
    amounts = field_optional_map(parent, key, at)
    for resource, amount in (amounts or {}).items():
        if amount is not None and not is_quantity(amount):
            raise (at / key / resource).wrong(amount, "a resource quantity")
