from __future__ import annotations

from pathlib import Path

import pytest

from simkube.trace import TraceFormatError, open_trace, read_trace, write_trace
from simkube.trace.model.usage import RecordedUsage
from simkube.trace.native.format import encode_header
from simkube.trace.tools.findings import FindingCode, Severity
from simkube.trace.tools.fixes import apply_fixes, choose_fixes
from simkube.trace.tools.stream import write_stream
from simkube.trace.tools.validate import validate
from simkube.trace.tools.validate_usage import usage_findings
from tests.unit.trace.conftest import HEADER, crafted, usage_trace, web_usage

pytestmark = pytest.mark.unit
WORKLOADS = {("apps/v1.Deployment", "shop/web")}
WEB = RecordedUsage.of(web_usage())


def record(*rows: object, workload: str = "shop/web") -> RecordedUsage:
    return RecordedUsage(kind="apps/v1.Deployment", workload=workload, period_ms=15_000,
                         rows=rows)


def test_a_good_series_of_a_workload_in_the_trace_is_clean() -> None:
    assert usage_findings([WEB], workloads=WORKLOADS, span_ms=60_000) == []


@pytest.mark.parametrize(("row", "path", "words"), [
    ([0, 1, -100, 1], "samples[0].cpu_millicores", "cpu_millicores is negative (-100)"),
    ([0, 1, "250m", 1], "samples[0].cpu_millicores", "cpu_millicores is a string, not an "
                                                      "integer"),
    ([0, 0, 1, 1], "samples[0].pods", "pods is 0"),
    ([0, 1, 1, None], "samples[0].memory_bytes", "memory_bytes is null, not an integer"),
])
def test_malformed_values_are_one_error_naming_the_field(row: list[object], path: str,
                                                         words: str) -> None:
    (finding,) = usage_findings([record(row)], workloads=WORKLOADS, span_ms=60_000)
    assert (finding.code, finding.severity, finding.path) == (
        FindingCode.INVALID_USAGE, Severity.ERROR, path)
    assert finding.object == "usage apps/v1.Deployment shop/web"
    assert words in finding.message


def test_many_bad_samples_are_one_finding_counting_the_rest() -> None:
    rows = [[t, 1, -1, 1] for t in range(100)]
    (finding,) = usage_findings([record(*rows)], workloads=WORKLOADS, span_ms=60_000)
    assert "(and 99 more problems)" in finding.message


def test_out_of_order_samples_and_twice_recorded_series_are_errors() -> None:
    findings = usage_findings([record([5, 1, 1, 1], [5, 1, 1, 1]), WEB],
                              workloads=WORKLOADS, span_ms=60_000)
    assert [(f.code, f.path) for f in findings] == [
        (FindingCode.INVALID_USAGE, "samples[1].t_ms"), (FindingCode.INVALID_USAGE, "")]
    assert "recorded twice" in findings[1].message


def test_unknown_workloads_and_samples_after_the_trace_are_warnings() -> None:
    findings = usage_findings([record([0, 1, 1, 1], [90_000, 1, 1, 1], workload="shop/gone")],
                              workloads=WORKLOADS, span_ms=60_000)
    assert [(f.code, f.severity, f.path) for f in findings] == [
        (FindingCode.USAGE_UNKNOWN_WORKLOAD, Severity.WARNING, "workload"),
        (FindingCode.USAGE_OUTSIDE_TRACE, Severity.WARNING, "samples[1].t_ms")]
    assert "never creates apps/v1.Deployment shop/gone" in findings[0].message
    assert "1 of 2 samples lie after the trace's last event (60 s)" in findings[1].message
    (empty,) = usage_findings([WEB], workloads=WORKLOADS, span_ms=None)
    assert "the trace has no events" in empty.message


def bad_usage_file(tmp_path: Path) -> Path:
    """A real trace file whose Deployment usage holds a negative and a non-numeric value."""
    records = [[1, encode_header(HEADER)],
               [7, "apps/v1.Deployment", "shop/web", 15_000,
                [[0, 1, -5, 1], [15_000, 1, 1, "x"]]],
               [7, "apps/v1.Deployment", "shop/ghost", 15_000, [[0, 1, 1, 1]]],
               [6, 0, 0, 0, 2]]
    path = tmp_path / "bad.trace"
    path.write_bytes(crafted(records, version=2))
    return path


def test_validate_reports_usage_of_a_file_and_loading_it_is_a_clear_error(
        tmp_path: Path) -> None:
    path = bad_usage_file(tmp_path)
    findings = validate(open_trace(path))
    assert {(f.code, f.object) for f in findings} >= {
        (FindingCode.INVALID_USAGE, "usage apps/v1.Deployment shop/web"),
        (FindingCode.USAGE_UNKNOWN_WORKLOAD, "usage apps/v1.Deployment shop/ghost")}
    with pytest.raises(TraceFormatError, match=r"bad.trace: usage of apps/v1.Deployment "
                       r"shop/web, samples\[0\].cpu_millicores: cpu_millicores is negative"):
        read_trace(path)


def test_fix_drop_usage_removes_the_broken_series(tmp_path: Path) -> None:
    path = bad_usage_file(tmp_path)
    source = open_trace(path)
    findings = validate(source)
    choices = choose_fixes(findings, requested={}, auto=True)
    write_stream(apply_fixes(source, findings, choices), tmp_path / "fixed.trace")
    assert read_trace(tmp_path / "fixed.trace").usage == ()


def test_validate_of_the_golden_trace_has_no_usage_findings(tmp_path: Path) -> None:
    trace = usage_trace()
    path = tmp_path / "t.trace"
    write_trace(trace, path)
    codes = {f.code for f in validate(open_trace(path))}
    assert not codes & {FindingCode.INVALID_USAGE, FindingCode.USAGE_UNKNOWN_WORKLOAD,
                        FindingCode.USAGE_OUTSIDE_TRACE}
