"""``skctl trace validate``: find what would break or distort a replay, before replaying.

One streaming pass collects what the trace creates and what its pod specs reference;
references are judged at the end, because an object may be created after (or before) the
first object that needs it. Findings are de-duplicated per object and field, so a Deployment
applied a hundred times is reported once, at the first event that shows the problem.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from simkube.trace.model.fields import (
    At,
    FieldTypeError,
    field_integer,
    field_optional_map,
    field_strings,
    json_kind,
    map_items,
)
from simkube.trace.model.pod_edits import PortKey, port_key, wrong_port_fields
from simkube.trace.model.pod_specs import (
    CONTAINER_LISTS,
    DEFAULT_TEMPLATE_PATHS,
    check_placement,
    check_resources,
    pod_specs,
    pod_templates,
    template_paths,
)
from simkube.trace.model.references import BUILT_IN, PodReference, RefKind, RefSite, pod_references
from simkube.trace.model.source import TraceSource
from simkube.trace.model.types import KubeObject, ObjectRef, TraceHeader
from simkube.trace.tools.findings import CATALOGUE, MISSING_CODES, Finding, FindingCode, FixChoice
from simkube.trace.tools.validate_usage import usage_findings

BUILT_IN_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})


@dataclass
class _Seen:
    """What one pass over the trace learned."""

    existing: set[tuple[str, str, str]] = field(default_factory=set)  # (Kind, ns, name)
    workloads: set[tuple[str, str]] = field(default_factory=set)  # (kind key, ns/name)
    namespaces: dict[str, tuple[str, int | None]] = field(default_factory=dict)
    references: dict[tuple[str, str], tuple[PodReference, ObjectRef, int | None, KubeObject]] = (
        field(default_factory=dict))
    kinds_seen: set[str] = field(default_factory=set)
    kinds_resolved: set[str] = field(default_factory=set)
    findings: dict[tuple[FindingCode, str, str], Finding] = field(default_factory=dict)

    def report(self, finding: Finding) -> None:
        self.findings.setdefault((finding.code, finding.object, finding.path), finding)


def validate(source: TraceSource) -> list[Finding]:
    """Every finding, ordered by code, then object, then field path."""
    header = source.header
    seen = _Seen()
    for obj in source.initial_state():
        _check_object(obj, header, seen, event=None)
    first_ts = last_ts = None
    for index, event in enumerate(source.events()):
        first_ts = event.ts_ms if first_ts is None else first_ts
        if last_ts is not None and event.ts_ms < last_ts:
            seen.report(Finding(code=FindingCode.TIMESTAMPS_BACKWARDS, object="events",
                                path=f"events[{index}].ts", event=index,
                                message=f"time goes backwards: {event.ts_ms} ms after "
                                f"{last_ts} ms; a replay would apply these out of order"))
        last_ts = event.ts_ms if last_ts is None else max(last_ts, event.ts_ms)
        for obj in event.applied:
            _check_object(obj, header, seen, event=index)
    _judge_references(seen)
    _judge_template_paths(header, seen)
    _judge_namespaces(header, seen)
    span = None if first_ts is None or last_ts is None else last_ts - first_ts
    for finding in usage_findings(source.recorded_usage(), workloads=seen.workloads,
                                  span_ms=span):
        seen.report(finding)
    return sorted(seen.findings.values(), key=lambda f: (f.code.value, f.object, f.path))


def _check_object(obj: KubeObject, header: TraceHeader, seen: _Seen, *,
                  event: int | None) -> None:
    ref = ObjectRef.of(obj)
    seen.existing.add((ref.kind, ref.namespace, ref.name))
    seen.workloads.add((ref.kind_key, ref.ns_name))
    seen.kinds_seen.add(ref.kind_key)
    if ref.namespace:
        seen.namespaces.setdefault(ref.namespace, (str(ref), event))
    if obj.get("status"):
        seen.report(Finding(code=FindingCode.STATUS_RECORDED, object=str(ref), path="status",
                            event=event, message="status was recorded; it is not replayed "
                            "and misstates the object until controllers rewrite it"))
    try:
        _check_pod_specs(obj, ref, header, seen, event=event)
    except FieldTypeError as exc:  # the first wrong type of this object; fix it and re-run
        seen.report(Finding(code=FindingCode.WRONG_TYPE, object=str(ref), path=exc.path,
                            event=event, message=f"{exc.problem}; the driver cannot "
                            "replay the object as recorded"))


def _check_pod_specs(obj: KubeObject, ref: ObjectRef, header: TraceHeader, seen: _Seen, *,
                     event: int | None) -> None:
    """What the driver and ``edit`` read of an object, read as they read it."""
    paths = template_paths(header, ref.kind_key)
    owner = At(str(ref))
    field_integer(field_optional_map(obj, "spec", owner) or {}, "replicas", owner / "spec")
    for at, template in [(owner, obj), *pod_templates(obj, paths, owner=owner.owner)]:
        metadata = field_optional_map(template, "metadata", at) or {}
        for key in ("labels", "annotations"):
            field_strings(metadata, key, at / "metadata")
    for site in pod_specs(obj, paths, owner=owner.owner):
        seen.kinds_resolved.add(ref.kind_key)
        check_placement(site)
        for key in CONTAINER_LISTS:
            for index, (place, container) in enumerate(map_items(site.spec, key, site.at)):
                check_resources(container, place)
                _check_ports(container, f"{site.path}.{key}[{index}]", ref, seen, event)
        for reference in pod_references(site):
            if reference.name not in BUILT_IN.get(reference.kind, ()):
                seen.references.setdefault((owner.owner, reference.path),
                                           (reference, ref, event, site.spec))


def _check_ports(container: dict[str, Any], path: str, ref: ObjectRef, seen: _Seen,
                 event: int | None) -> None:
    ports = container.get("ports")
    if ports is not None and not isinstance(ports, list):
        _report_invalid_port(f"{path}.ports", f"ports is {json_kind(ports)}, not a list",
                             ref, seen, event)
        return
    keys: set[PortKey] = set()
    for index, port in enumerate(ports or []):
        where = f"{path}.ports[{index}]"
        key = port_key(port)
        if key is None:  # malformed: report the field, and leave it out of the duplicate check
            _report_malformed_port(port, where, ref, seen, event)
            continue
        if key in keys:
            seen.report(Finding(
                code=FindingCode.DUPLICATE_CONTAINER_PORT, object=str(ref), path=where,
                event=event, message=f"containerPort {key[0]}/{key[1]} is listed twice; "
                "server-side apply rejects duplicate list keys"))
        keys.add(key)


def _report_malformed_port(port: Any, where: str, ref: ObjectRef, seen: _Seen,
                           event: int | None) -> None:
    if not isinstance(port, dict):
        _report_invalid_port(where, f"the entry is {json_kind(port)}, not a map", ref, seen, event)
        return
    for name, expected in wrong_port_fields(port):
        _report_invalid_port(f"{where}.{name}", f"{name} is {json_kind(port[name])}, not "
                             f"{expected}", ref, seen, event)


def _report_invalid_port(path: str, problem: str, ref: ObjectRef, seen: _Seen,
                         event: int | None) -> None:
    seen.report(Finding(code=FindingCode.INVALID_CONTAINER_PORT, object=str(ref), path=path,
                        event=event, message=f"{problem}; the API server rejects the object"))


def _judge_references(seen: _Seen) -> None:
    for reference, owner, event, spec in seen.references.values():
        namespace = owner.namespace if reference.kind.namespaced else ""
        if (reference.kind.kind, namespace, reference.name) in seen.existing:
            continue
        missing = ObjectRef(api_version=reference.kind.api_version, kind=reference.kind.kind,
                            namespace=namespace, name=reference.name)
        code = MISSING_CODES[reference.kind]
        volume = reference.site in (RefSite.VOLUME, RefSite.PROJECTED)
        fixes = tuple(fix for fix in CATALOGUE[code].fixes
                      if volume or fix is not FixChoice.EMPTY_DIR)
        seen.report(Finding(code=code, object=str(owner), path=reference.path, event=event,
                            missing=missing, proposed=_proposed(missing, spec), fixes=fixes,
                            message=f"{missing.kind} {missing.ns_name} is referenced but never "
                            "created in the trace"))


def _proposed(missing: ObjectRef, spec: dict[str, Any]) -> KubeObject:
    """The empty object add-object would create, carrying what admission will check."""
    obj = missing.stub()
    if missing.kind == RefKind.PRIORITY_CLASS.kind:
        priority = spec.get("priority")
        obj["value"] = priority if type(priority) is int else 0  # admission compares them
    elif missing.kind == RefKind.RUNTIME_CLASS.kind:
        obj["handler"] = "runc"
        if isinstance(spec.get("overhead"), dict):
            obj["overhead"] = {"podFixed": spec["overhead"]}
    return obj


def _judge_template_paths(header: TraceHeader, seen: _Seen) -> None:
    for tracked in header.tracked_kinds:
        key = tracked.kind_key
        known = key in DEFAULT_TEMPLATE_PATHS
        where = f"config.trackedObjects[{key}].podSpecTemplatePaths"
        if not tracked.pod_template_paths and known:
            seen.report(Finding(code=FindingCode.POD_TEMPLATE_PATH, object=key, path=where,
                                message=f"{key} is tracked without a pod-template path; the "
                                "driver cannot adjust its pods or match their lifecycles"))
        elif (tracked.pod_template_paths and key in seen.kinds_seen
              and key not in seen.kinds_resolved):
            paths = ", ".join(repr(path) for path in tracked.pod_template_paths)
            seen.report(Finding(code=FindingCode.POD_TEMPLATE_PATH, object=key, path=where,
                                fixes=(FixChoice.DEFAULT_PATH,) if known else (),
                                message=f"no {key} object has a pod template at {paths}"))


def _judge_namespaces(header: TraceHeader, seen: _Seen) -> None:
    # Without tracked Namespaces the driver creates one per namespace used; with them, the
    # trace itself must create every namespace its objects live in.
    if header.tracked("v1.Namespace") is None and "v1.Namespace" not in seen.kinds_seen:
        return
    for namespace, (first, event) in seen.namespaces.items():
        if namespace in BUILT_IN_NAMESPACES or ("Namespace", "", namespace) in seen.existing:
            continue
        missing = ObjectRef(api_version="v1", kind="Namespace", namespace="", name=namespace)
        seen.report(Finding(code=FindingCode.NAMESPACE_MISSING, object=first,
                            path="metadata.namespace", event=event, missing=missing,
                            proposed=missing.stub(),
                            message=f"namespace {namespace} never exists in the trace"))
