"""Small, exact changes to a pod spec, shared by ``fix`` (references, ports) and ``edit``.

Each function changes one thing and leaves the rest of the spec as recorded, because a
what-if or a repair should differ from the original only where it says it does.
"""

from __future__ import annotations

from typing import Any

from simkube.trace.references import PodReference, RefKind, RefSite

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


def dedupe_ports(container: dict[str, Any]) -> None:
    """Keep the first entry per (containerPort, protocol): SSA's key for the ports list."""
    ports = container.get("ports")
    if not isinstance(ports, list):
        return
    seen: set[tuple[Any, Any]] = set()
    kept = []
    for port in ports:
        key = ((port.get("containerPort"), port.get("protocol") or "TCP")
               if isinstance(port, dict) else (id(port), None))
        if key not in seen:
            seen.add(key)
            kept.append(port)
    container["ports"] = kept
