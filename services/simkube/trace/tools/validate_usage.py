"""The recorded-usage part of ``skctl trace validate``: what the replay could not play.

Reading a trace checks only the shape of a usage record; its values are judged here, all of
them, so one run of ``validate`` lists every broken series instead of the first error a
replay would stop at. One finding per series and problem kind keeps a series of a million bad
samples to one line: the first bad sample is named, the rest are counted.
"""

from __future__ import annotations

from simkube.trace.model.usage import RecordedUsage
from simkube.trace.tools.findings import Finding, FindingCode


def usage_findings(records: list[RecordedUsage], *, workloads: set[tuple[str, str]],
                   span_ms: int | None) -> list[Finding]:
    """Findings for every series; ``workloads`` holds (kind key, ns/name) of every object the
    trace creates, ``span_ms`` is the time from the first to the last event."""
    findings = []
    seen: set[tuple[str, str]] = set()
    for record in records:
        where = f"usage {record.label}"
        problems = record.problems()
        if (record.kind, record.workload) in seen:
            problems.insert(0, ("", "the workload's usage is recorded twice; a replay "
                                "would not know which series to play"))
        seen.add((record.kind, record.workload))
        if problems:
            path, message = problems[0]
            more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
            findings.append(Finding(code=FindingCode.INVALID_USAGE, object=where, path=path,
                                    message=f"{message}{more}; the trace cannot be replayed "
                                    "with this series"))
        if (record.kind, record.workload) not in workloads:
            findings.append(Finding(
                code=FindingCode.USAGE_UNKNOWN_WORKLOAD, object=where, path="workload",
                message=f"the trace never creates {record.label}; no replayed pod would use "
                "this usage"))
        late = [index for index, row in enumerate(record.rows)
                if span_ms is not None and isinstance(row, list | tuple) and row
                and type(row[0]) is int and row[0] > span_ms]
        if late or (span_ms is None and record.rows):
            count = len(late) if late else len(record.rows)
            after = ("the trace has no events" if span_ms is None
                     else f"after the trace's last event ({span_ms / 1000:g} s)")
            findings.append(Finding(
                code=FindingCode.USAGE_OUTSIDE_TRACE, object=where,
                path=f"samples[{late[0] if late else 0}].t_ms",
                message=f"{count} of {len(record.rows)} samples lie {after}; the replay "
                "never plays them"))
    return findings
