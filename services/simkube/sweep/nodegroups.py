"""A point's node groups: the base file with the point's field values put in, checked whole.

The edit is made on the YAML document, not on sk-cloudprov's parsed config, because the
point's environment is started from a file (``env up --node-groups``) and both autoscalers
read that file. The edited document is parsed with sk-cloudprov's own parser, so a point
whose groups sk-cloudprov would refuse (``minSize`` above ``maxSize`` once both are applied)
is refused while planning, not after its environment has started.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from simkube.cloudprov.config import parse
from simkube.core.config import load_yaml_mapping
from simkube.core.errors import ConfigError
from simkube.env.services.commands import DEFAULT_NODE_GROUPS
from simkube.sweep.axes import NodeGroupField, Value

NodeGroupEdit = tuple[str, NodeGroupField, Value]  # group id, field, value


def base_file(chosen: Path | None) -> Path:
    """The node-groups file points start from: the sweep's, else the environment's default."""
    return chosen or DEFAULT_NODE_GROUPS


def load_document(path: Path) -> dict[str, Any]:
    return load_yaml_mapping(path, what="node-groups file")


def current(document: Mapping[str, Any], *, group: str, field: NodeGroupField) -> Any:
    """The base's value of ``group``'s ``field`` (None when the file leaves it unset)."""
    entry = _group(document, group)
    if field is NodeGroupField.INSTANCE_TYPE:
        return (entry.get("shape") or {}).get("instanceType")
    if field is NodeGroupField.DELAY:
        own = (entry.get("provisioning") or {}).get("delay")
        return own if own is not None else (document.get("provisioning") or {}).get("delay")
    return entry.get(field.value)


def apply(document: Mapping[str, Any], edits: Sequence[NodeGroupEdit], *, source: Path,
          where: str) -> dict[str, Any]:
    """A copy of ``document`` with ``edits``, parsed by sk-cloudprov's rules; ``where`` (the
    point) opens every error. ``nodeFile`` paths are made absolute, since the copy is written
    elsewhere."""
    edited = copy.deepcopy(dict(document))
    for group_id, field, value in edits:
        entry = _group(edited, group_id, where=where)
        if field is NodeGroupField.INSTANCE_TYPE:
            if not isinstance(entry.get("shape"), dict):
                raise ConfigError(f"{where}: node group {group_id!r} has no shape, so its "
                                  "instanceType cannot be set (give the group a shape)")
            entry["shape"]["instanceType"] = value
        elif field is NodeGroupField.DELAY:
            entry.setdefault("provisioning", {})["delay"] = value
        else:
            entry[field.value] = value
    for entry in edited.get("nodeGroups") or []:
        if isinstance(entry, dict) and isinstance(entry.get("nodeFile"), str):
            entry["nodeFile"] = str((source.parent / entry["nodeFile"]).resolve())

    def read(ref: str, what: str) -> dict[str, Any]:
        return load_yaml_mapping(source.parent / ref, what=what)

    try:
        parse(edited, source=f"node groups from {source.name}", read=read)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc.message}", hint=exc.hint) from None
    return edited


def write(document: Mapping[str, Any], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(dict(document), sort_keys=False), encoding="utf-8")
    return path


def _group(document: Mapping[str, Any], group_id: str, *,
           where: str = "nodeGroups") -> dict[str, Any]:
    groups = document.get("nodeGroups")
    for entry in groups if isinstance(groups, list) else []:
        if isinstance(entry, dict) and entry.get("id") == group_id:
            return entry
    known = [str(entry.get("id")) for entry in groups or [] if isinstance(entry, dict)]
    raise ConfigError(f"{where}: there is no node group {group_id!r} "
                      f"(known: {', '.join(known) or 'none'})")
