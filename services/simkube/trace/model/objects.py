"""Shape checks and accessors for the Kubernetes objects inside a trace.

Readers check each object's identity fields once, where the file position is known, so that
every later step (counting, validating, editing, replaying) can rely on ``apiVersion``,
``kind`` and ``metadata.name`` being non-empty strings without re-checking.
"""

from __future__ import annotations

from typing import Any

from simkube.trace.errors import TraceFormatError
from simkube.trace.model.types import KubeObject, ObjectRef


def check_object(obj: Any, *, where: str) -> ObjectRef:
    """The object's reference, or a ``TraceFormatError`` saying which identity field is bad."""
    if not isinstance(obj, dict):
        raise TraceFormatError(f"expected a Kubernetes object (a map), found {_type(obj)}",
                               where=where)
    for key in ("apiVersion", "kind"):
        value = obj.get(key)
        if not isinstance(value, str) or not value:
            raise TraceFormatError(f"{key} must be a non-empty string, found {_type(value)}",
                                   where=where)
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        raise TraceFormatError(f"metadata must be a map, found {_type(meta)}", where=where)
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise TraceFormatError(f"metadata.name must be a non-empty string, found {_type(name)}",
                               where=where)
    namespace = meta.get("namespace")
    if namespace is not None and not isinstance(namespace, str):
        raise TraceFormatError(f"metadata.namespace must be a string, found {_type(namespace)}",
                               where=where)
    return ObjectRef(api_version=obj["apiVersion"], kind=obj["kind"],
                     namespace=namespace or "", name=name)


def check_ref(ref: ObjectRef, obj: KubeObject, *, where: str) -> None:
    """An encoded object's body must be the object its envelope names."""
    actual = check_object(obj, where=where)
    if actual != ref:
        raise TraceFormatError(f"object body is {actual} but its record names {ref}",
                               where=where)


def kind_key(obj: KubeObject) -> str:
    return f"{obj['apiVersion']}.{obj['kind']}"


def labels_of(obj: KubeObject) -> dict[str, str]:
    """The object's labels; malformed labels count as none rather than crashing a filter."""
    labels = obj.get("metadata", {}).get("labels")
    if not isinstance(labels, dict):
        return {}
    return {str(key): str(value) for key, value in labels.items()}


def namespace_of(obj: KubeObject) -> str:
    namespace = obj.get("metadata", {}).get("namespace")
    return namespace if isinstance(namespace, str) else ""


def _type(value: Any) -> str:
    return "nothing" if value is None else type(value).__name__
