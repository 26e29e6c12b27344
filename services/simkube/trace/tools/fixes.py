"""``skctl trace fix``: repair what ``validate`` found, with the fix chosen per finding code.

Fixes act on what was found, not on field paths recorded at one event: a reference to a
missing ConfigMap is removed (or its volume replaced) in every version of every object that
carries it, and objects added to satisfy references go to the start of the trace, before
anything that needs them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from simkube.core.errors import ConfigError
from simkube.trace.model.pod_edits import dedupe_ports, drop_invalid_ports, remove_reference
from simkube.trace.model.pod_specs import (
    DEFAULT_TEMPLATE_PATHS,
    PodSpecSite,
    containers,
    pod_specs,
    template_paths,
)
from simkube.trace.model.references import RefKind, pod_references
from simkube.trace.model.source import TraceSource, checked_usage
from simkube.trace.model.types import KubeObject, ObjectRef, TraceEvent, TraceHeader, TrackedKind
from simkube.trace.model.usage import WorkloadUsage
from simkube.trace.tools.findings import CATALOGUE, MISSING_CODES, Finding, FindingCode, FixChoice
from simkube.trace.tools.stream import TraceStream

_REF_KINDS = {code: kind for kind, code in MISSING_CODES.items()}
Target = tuple[RefKind, str, str]  # kind, namespace ("" if cluster-scoped), name


def choose_fixes(findings: list[Finding], *, requested: dict[FindingCode, FixChoice],
                 auto: bool) -> dict[FindingCode, FixChoice]:
    """The fix per code: as requested, else (with ``auto``) each code's safe default."""
    for code, choice in requested.items():
        if choice not in CATALOGUE[code].fixes:
            offered = ", ".join(fix.value for fix in CATALOGUE[code].fixes)
            raise ConfigError(f"{code.value} cannot be fixed with {choice.value}; "
                              f"choose one of {offered}")
        unfit = [f.path for f in findings if f.code is code and choice not in f.fix_choices]
        if unfit:
            raise ConfigError(f"{choice.value} does not apply to every {code.value} finding "
                              f"(not to {unfit[0]})", hint="choose another fix for this code")
    chosen = dict(requested)
    if auto:
        for finding in findings:
            if finding.code not in chosen and finding.fix_choices:
                chosen[finding.code] = finding.fix_choices[0]
    return chosen


@dataclass
class _Plan:
    added: dict[ObjectRef, KubeObject] = field(default_factory=dict)
    references: dict[Target, FixChoice] = field(default_factory=dict)
    default_paths: set[str] = field(default_factory=set)
    drop_namespaces: set[str] = field(default_factory=set)
    drop_status: bool = False
    dedupe_ports: bool = False
    drop_invalid_ports: bool = False
    sort: bool = False
    drop_usage: set[str] = field(default_factory=set)  # "usage <kind key> <ns/name>"


def _plan(findings: list[Finding], choices: dict[FindingCode, FixChoice]) -> _Plan:
    plan = _Plan()
    for finding in findings:
        choice = choices.get(finding.code)
        if choice is None or choice not in finding.fix_choices:
            continue
        if choice is FixChoice.ADD_OBJECT and finding.missing and finding.proposed:
            plan.added.setdefault(finding.missing, finding.proposed)
        elif choice in (FixChoice.DROP_REFERENCE, FixChoice.EMPTY_DIR) and finding.missing:
            missing = finding.missing
            plan.references[(_REF_KINDS[finding.code], missing.namespace, missing.name)] = choice
        elif choice is FixChoice.DROP_OBJECTS and finding.missing:
            plan.drop_namespaces.add(finding.missing.name)
        elif choice is FixChoice.DROP_USAGE:
            plan.drop_usage.add(finding.object)
        elif choice is FixChoice.DEFAULT_PATH:
            plan.default_paths.add(finding.object)  # the tracked kind
        plan.drop_status |= choice is FixChoice.DROP_STATUS
        plan.dedupe_ports |= choice is FixChoice.DROP_DUPLICATES
        plan.drop_invalid_ports |= choice is FixChoice.DROP_INVALID
        plan.sort |= choice is FixChoice.SORT
    return plan


def apply_fixes(source: TraceSource, findings: list[Finding],
                choices: dict[FindingCode, FixChoice]) -> TraceStream:
    """The source with the chosen fixes applied, as a stream to write."""
    plan = _plan(findings, choices)
    header = _fixed_header(source.header, plan)
    events: Iterable[TraceEvent] = _fixed_events(source.events(), header, plan)
    if plan.sort:
        events = sorted(events, key=lambda event: event.ts_ms)  # stable: ties keep order
    # Namespaces first: everything else added may live in one.
    added = sorted(plan.added.values(), key=lambda obj: obj["kind"] != "Namespace")
    initial = _fixed_objects(source.initial_state(), header, plan)
    return TraceStream(
        header=header, initial_state=[*added, *initial], events=events,
        lifecycles=lambda: [lc for lc in source.lifecycles()
                            if lc.owner.split("/", 1)[0] not in plan.drop_namespaces],
        usage=lambda: _fixed_usage(source, plan))


def _fixed_usage(source: TraceSource, plan: _Plan) -> tuple[WorkloadUsage, ...]:
    kept = [record for record in source.recorded_usage()
            if f"usage {record.label}" not in plan.drop_usage
            and record.workload.rpartition("/")[0] not in plan.drop_namespaces]
    return checked_usage(kept, source=source.name)


def _fixed_header(header: TraceHeader, plan: _Plan) -> TraceHeader:
    kinds = [replace(kind, pod_template_paths=(DEFAULT_TEMPLATE_PATHS[kind.kind_key],))
             if kind.kind_key in plan.default_paths else kind for kind in header.tracked_kinds]
    for ref in plan.added:  # added objects' kinds become tracked, so the trace stays coherent
        if all(kind.kind_key != ref.kind_key for kind in kinds):
            kinds.append(TrackedKind(kind_key=ref.kind_key))
    return replace(header, tracked_kinds=tuple(kinds))


def _fixed_events(events: Iterable[TraceEvent], header: TraceHeader,
                  plan: _Plan) -> Iterator[TraceEvent]:
    for event in events:
        if plan.drop_namespaces:
            event.deleted = [obj for obj in event.deleted if not _dropped(obj, plan)]
        event.applied = list(_fixed_objects(event.applied, header, plan))
        yield event


def _dropped(obj: KubeObject, plan: _Plan) -> bool:
    return ObjectRef.of(obj).namespace in plan.drop_namespaces


def _fixed_objects(objects: Iterable[KubeObject], header: TraceHeader,
                   plan: _Plan) -> Iterator[KubeObject]:
    for obj in objects:
        if plan.drop_namespaces and _dropped(obj, plan):
            continue
        if plan.drop_status:
            obj.pop("status", None)
        if plan.references or plan.dedupe_ports or plan.drop_invalid_ports:
            ref = ObjectRef.of(obj)
            for site in pod_specs(obj, template_paths(header, ref.kind_key)):
                _fix_pod_spec(site, ref.namespace, plan)
        yield obj


def _fix_pod_spec(site: PodSpecSite, namespace: str, plan: _Plan) -> None:
    spec = site.spec
    if plan.references:
        site_refs = []
        for reference in pod_references(site):
            ns = namespace if reference.kind.namespaced else ""
            choice = plan.references.get((reference.kind, ns, reference.name))
            if choice is not None:
                site_refs.append((reference, choice))
        # Deepest and latest entries first, so earlier list indices stay valid.
        for reference, choice in sorted(site_refs, key=lambda item: _order(item[0].location),
                                        reverse=True):
            remove_reference(spec, reference, empty_dir=choice is FixChoice.EMPTY_DIR)
    for _, _, container in containers(spec, site.at):
        if plan.drop_invalid_ports:
            drop_invalid_ports(container)
        if plan.dedupe_ports:
            dedupe_ports(container)


def _order(location: tuple[str | int, ...]) -> tuple[tuple[int, Any], ...]:
    return tuple((0, part) if isinstance(part, int) else (1, part) for part in location)
