from __future__ import annotations

import pytest

from simkube.trace.tools.findings import (
    CATALOGUE,
    MISSING_CODES,
    Finding,
    FindingCode,
    FixChoice,
    Severity,
    exit_status,
)

pytestmark = pytest.mark.unit


def finding(code: FindingCode) -> Finding:
    return Finding(code=code, object="apps/v1.Deployment ns/web", path="spec", message="m")


def test_every_code_has_a_severity_and_a_default_fix() -> None:
    assert set(CATALOGUE) == set(FindingCode)
    # wrong-type has no repair: only the user knows what the field should hold; usage after
    # the trace's end needs none: the replay never plays it.
    assert [code for code, info in CATALOGUE.items() if not info.fixes] == [
        FindingCode.WRONG_TYPE, FindingCode.USAGE_OUTSIDE_TRACE]
    assert set(MISSING_CODES.values()) <= set(FindingCode)


def test_codes_are_stable_strings() -> None:
    assert [code.value for code in FindingCode] == [
        "missing-service-account", "missing-configmap", "missing-secret", "missing-pvc",
        "missing-priority-class", "missing-runtime-class", "status-recorded",
        "duplicate-container-port", "pod-template-path", "timestamps-backwards",
        "namespace-missing", "invalid-container-port", "wrong-type", "invalid-usage",
        "usage-unknown-workload", "usage-outside-trace"]


def test_json_form() -> None:
    assert finding(FindingCode.MISSING_PVC).to_json() == {
        "code": "missing-pvc", "severity": "error", "object": "apps/v1.Deployment ns/web",
        "path": "spec", "message": "m", "event": None, "fixes": ["empty-dir", "drop-reference"]}


def test_a_finding_may_offer_fewer_fixes_than_its_code() -> None:
    narrowed = Finding(code=FindingCode.MISSING_CONFIGMAP, object="o", path="p", message="m",
                       fixes=(FixChoice.ADD_OBJECT,))
    assert narrowed.fix_choices == (FixChoice.ADD_OBJECT,)
    assert narrowed.severity is Severity.WARNING


def test_exit_status() -> None:
    assert exit_status([]) == 0
    assert exit_status([finding(FindingCode.STATUS_RECORDED)]) == 1
    assert exit_status([finding(FindingCode.STATUS_RECORDED),
                        finding(FindingCode.MISSING_SERVICE_ACCOUNT)]) == 2
