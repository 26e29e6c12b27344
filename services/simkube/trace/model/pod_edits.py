"""Small, exact changes to a pod spec, shared by ``fix`` (references, ports) and ``edit``.

Each function changes one thing and leaves the rest of the spec as recorded, because a
what-if or a repair should differ from the original only where it says it does.
"""

from __future__ import annotations

from typing import Any

from simkube.trace.model.references import PodReference, RefKind, RefSite

# Fields admission derives from a class: they must go with the class reference.
_FIELD_COMPANIONS = {
    RefKind.SERVICE_ACCOUNT: ("serviceAccountName", "serviceAccount"),
    RefKind.PRIORITY_CLASS: ("priorityClassName", "priority"),
    RefKind.RUNTIME_CLASS: ("runtimeClassName", "overhead"),
}


def remove_reference(spec: dict[str, Any], reference: PodReference, *, empty_dir: bool) -> None:
    """Remove one reference (``empty_dir``: replace its volume with an emptyDir instead)."""
    location = reference.location
    if reference.site is RefSite.FIELD:
        for key in _FIELD_COMPANIONS[reference.kind]:
            spec.pop(key, None)
    elif reference.site is RefSite.ENV:
        container = spec[str(location[0])][int(location[1])]
        del container["env"][int(location[3])]
    elif reference.site is RefSite.ENV_FROM:
        container = spec[str(location[0])][int(location[1])]
        source = container["envFrom"][int(location[3])]
        source.pop(str(location[4]), None)
        if not {"configMapRef", "secretRef"} & source.keys():
            del container["envFrom"][int(location[3])]
    else:
        volume_index = int(location[1])
        volume = spec["volumes"][volume_index]
        if empty_dir:
            spec["volumes"][volume_index] = {"name": volume.get("name"), "emptyDir": {}}
        elif reference.site is RefSite.PROJECTED:
            sources = volume.get("projected", {}).get("sources", [])
            if int(location[2]) < len(sources):
                del sources[int(location[2])]
        else:
            del spec["volumes"][volume_index]
            _unmount(spec, volume.get("name"))


def _unmount(spec: dict[str, Any], volume: Any) -> None:
    for key in ("initContainers", "containers"):
        for container in spec.get(key) or []:
            mounts = container.get("volumeMounts") if isinstance(container, dict) else None
            if isinstance(mounts, list):
                container["volumeMounts"] = [mount for mount in mounts
                                             if not isinstance(mount, dict)
                                             or mount.get("name") != volume]


PortKey = tuple[int | None, str]  # (containerPort, protocol): SSA's key for the ports list


def wrong_port_fields(port: dict[str, Any]) -> list[tuple[str, str]]:
    """The fields of a ports entry whose type the API server rejects, as (field, expected)."""
    number, protocol = port.get("containerPort"), port.get("protocol")
    wrong = []
    if number is not None and type(number) is not int:  # bool is an int to Python, not to k8s
        wrong.append(("containerPort", "an integer"))
    if protocol is not None and not isinstance(protocol, str):
        wrong.append(("protocol", "a string"))
    return wrong


def port_key(port: Any) -> PortKey | None:
    """A ports entry's list key, or ``None`` if the entry is malformed (not a map, or a field
    of the wrong type): a list or map there could not even be hashed or compared as a key."""
    if not isinstance(port, dict) or wrong_port_fields(port):
        return None
    return port.get("containerPort"), port.get("protocol") or "TCP"


def dedupe_ports(container: dict[str, Any]) -> None:
    """Keep the first entry per (containerPort, protocol); malformed entries are left alone
    (they have no key to compare; ``drop_invalid_ports`` removes them)."""
    ports = container.get("ports")
    if not isinstance(ports, list):
        return
    seen: set[PortKey] = set()
    kept = []
    for port in ports:
        key = port_key(port)
        if key is None or key not in seen:
            if key is not None:
                seen.add(key)
            kept.append(port)
    container["ports"] = kept


def drop_invalid_ports(container: dict[str, Any]) -> None:
    """Remove malformed ports entries, or ``ports`` itself when it is not a list."""
    ports = container.get("ports")
    if ports is None:
        return
    if not isinstance(ports, list):
        del container["ports"]
    else:
        container["ports"] = [port for port in ports if port_key(port) is not None]
