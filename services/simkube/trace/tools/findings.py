"""What ``skctl trace validate`` can report: stable codes, severities and the fixes on offer.

Codes are an interface (scripts match on them, ``--fix CODE=CHOICE`` names them), so each is
defined once here with its severity, the fixes it accepts and the one ``--auto`` picks: the
fix that changes the recorded workload least.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from simkube.trace.model.references import RefKind
from simkube.trace.model.types import KubeObject, ObjectRef


class Severity(Enum):
    WARNING = "warning"  # the replay runs but differs from what was recorded
    ERROR = "error"  # the replay fails for these objects


class FixChoice(Enum):
    ADD_OBJECT = "add-object"  # add an empty object of that name at the start of the trace
    DROP_REFERENCE = "drop-reference"  # remove the reference from the pod spec
    EMPTY_DIR = "empty-dir"  # replace the volume with an emptyDir of the same name
    DROP_STATUS = "drop-status"
    DROP_DUPLICATES = "drop-duplicates"  # keep the first of duplicate container ports
    DEFAULT_PATH = "default-path"  # use the built-in kind's well-known pod-template path
    SORT = "sort"  # order events by time (stable)
    DROP_OBJECTS = "drop-objects"  # drop the objects of a namespace that never exists
    DROP_INVALID = "drop-invalid"  # drop malformed container ports entries
    DROP_USAGE = "drop-usage"  # drop the workload's recorded usage series


class FindingCode(Enum):
    MISSING_SERVICE_ACCOUNT = "missing-service-account"
    MISSING_CONFIGMAP = "missing-configmap"
    MISSING_SECRET = "missing-secret"  # noqa: S105  # a finding code, not a password
    MISSING_PVC = "missing-pvc"
    MISSING_PRIORITY_CLASS = "missing-priority-class"
    MISSING_RUNTIME_CLASS = "missing-runtime-class"
    STATUS_RECORDED = "status-recorded"
    DUPLICATE_CONTAINER_PORT = "duplicate-container-port"
    POD_TEMPLATE_PATH = "pod-template-path"
    TIMESTAMPS_BACKWARDS = "timestamps-backwards"
    NAMESPACE_MISSING = "namespace-missing"
    INVALID_CONTAINER_PORT = "invalid-container-port"
    WRONG_TYPE = "wrong-type"
    INVALID_USAGE = "invalid-usage"
    USAGE_UNKNOWN_WORKLOAD = "usage-unknown-workload"
    USAGE_OUTSIDE_TRACE = "usage-outside-trace"


@dataclass(frozen=True, slots=True)
class CodeInfo:
    severity: Severity
    fixes: tuple[FixChoice, ...]  # the first is what --auto applies


_ADD, _DROP, _EMPTY = FixChoice.ADD_OBJECT, FixChoice.DROP_REFERENCE, FixChoice.EMPTY_DIR
CATALOGUE: dict[FindingCode, CodeInfo] = {
    FindingCode.MISSING_SERVICE_ACCOUNT: CodeInfo(Severity.ERROR, (_ADD, _DROP)),
    # Fake nodes run no containers, so a missing ConfigMap or Secret only distorts.
    FindingCode.MISSING_CONFIGMAP: CodeInfo(Severity.WARNING, (_ADD, _DROP, _EMPTY)),
    FindingCode.MISSING_SECRET: CodeInfo(Severity.WARNING, (_ADD, _DROP, _EMPTY)),
    # An empty claim would never bind (no provisioner), so a scratch volume is the safe fix.
    FindingCode.MISSING_PVC: CodeInfo(Severity.ERROR, (_EMPTY, _DROP)),
    FindingCode.MISSING_PRIORITY_CLASS: CodeInfo(Severity.ERROR, (_ADD, _DROP)),
    FindingCode.MISSING_RUNTIME_CLASS: CodeInfo(Severity.ERROR, (_ADD, _DROP)),
    FindingCode.STATUS_RECORDED: CodeInfo(Severity.WARNING, (FixChoice.DROP_STATUS,)),
    FindingCode.DUPLICATE_CONTAINER_PORT: CodeInfo(Severity.ERROR,
                                                   (FixChoice.DROP_DUPLICATES,)),
    FindingCode.POD_TEMPLATE_PATH: CodeInfo(Severity.WARNING, (FixChoice.DEFAULT_PATH,)),
    FindingCode.TIMESTAMPS_BACKWARDS: CodeInfo(Severity.ERROR, (FixChoice.SORT,)),
    FindingCode.NAMESPACE_MISSING: CodeInfo(Severity.ERROR, (_ADD, FixChoice.DROP_OBJECTS)),
    # Fake nodes serve no ports, so dropping the entry loses nothing the replay uses.
    FindingCode.INVALID_CONTAINER_PORT: CodeInfo(Severity.ERROR, (FixChoice.DROP_INVALID,)),
    # A field the driver interprets (a template, containers, labels, ...) holds the wrong
    # type: no repair would be faithful to the recording, so the user decides.
    FindingCode.WRONG_TYPE: CodeInfo(Severity.ERROR, ()),
    # Recorded usage the replay cannot play (negative, not an integer, out of order, no pods):
    # the trace is refused at load, so the only repair is replaying without that series.
    FindingCode.INVALID_USAGE: CodeInfo(Severity.ERROR, (FixChoice.DROP_USAGE,)),
    # Usage of a workload the trace never creates: no replayed pod would ever use it.
    FindingCode.USAGE_UNKNOWN_WORKLOAD: CodeInfo(Severity.WARNING, (FixChoice.DROP_USAGE,)),
    # Samples after the last event are never played; harmless, so nothing to repair.
    FindingCode.USAGE_OUTSIDE_TRACE: CodeInfo(Severity.WARNING, ()),
}

MISSING_CODES: dict[RefKind, FindingCode] = {
    RefKind.SERVICE_ACCOUNT: FindingCode.MISSING_SERVICE_ACCOUNT,
    RefKind.CONFIG_MAP: FindingCode.MISSING_CONFIGMAP,
    RefKind.SECRET: FindingCode.MISSING_SECRET,
    RefKind.PVC: FindingCode.MISSING_PVC,
    RefKind.PRIORITY_CLASS: FindingCode.MISSING_PRIORITY_CLASS,
    RefKind.RUNTIME_CLASS: FindingCode.MISSING_RUNTIME_CLASS,
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One problem: which object, which field, why it matters, and how it can be fixed."""

    code: FindingCode
    object: str  # "apps/v1.Deployment default/web"; a tracked kind; or "events"
    path: str  # field path inside that object (or trace location)
    message: str
    event: int | None = None  # first event showing it (None: initial state or header)
    missing: ObjectRef | None = None  # the object that does not exist, for missing-* codes
    proposed: KubeObject | None = None  # what add-object would add for ``missing``
    fixes: tuple[FixChoice, ...] | None = None  # narrower than the code's own, if need be

    @property
    def severity(self) -> Severity:
        return CATALOGUE[self.code].severity

    @property
    def fix_choices(self) -> tuple[FixChoice, ...]:
        return CATALOGUE[self.code].fixes if self.fixes is None else self.fixes

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code.value, "severity": self.severity.value,
                "object": self.object, "path": self.path, "message": self.message,
                "event": self.event, "fixes": [fix.value for fix in self.fix_choices]}


def exit_status(findings: list[Finding]) -> int:
    """0 clean, 1 warnings only, 2 any error."""
    if any(finding.severity is Severity.ERROR for finding in findings):
        return 2
    return 1 if findings else 0
