"""The outcome as JUnit XML: the format every CI system (GitLab, Jenkins, Buildkite, ...) shows.

One testsuite, one testcase per figure; a regression is a ``<failure>`` whose message holds
the numbers (before, after, change, limit), so the CI's test view alone says what moved.
Missing and ignored figures are ``<skipped>`` with the reason.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from simkube.check.judging import Outcome, Verdict
from simkube.check.rendering import cells, failure_text, headline
from simkube.core.errors import ConfigError

SUITE = "skctl check"


def junit_xml(outcome: Outcome) -> str:
    failures = len(outcome.regressions)
    skipped = sum(j.verdict in (Verdict.MISSING, Verdict.IGNORED) for j in outcome.judgements)
    suite = ET.Element("testsuite", name=SUITE, tests=str(len(outcome.judgements)),
                       failures=str(failures), errors="0", skipped=str(skipped))
    ET.SubElement(ET.SubElement(suite, "properties"), "property", name="headline",
                  value=headline(outcome))
    for judgement in outcome.judgements:
        case = ET.SubElement(suite, "testcase", classname=f"{SUITE}.{outcome.candidate.label}",
                             name=judgement.figure.value)
        _, before, after, change, limit = cells(judgement)
        detail = f"baseline {before}, candidate {after}, change {change}, limit {limit}"
        if judgement.verdict is Verdict.REGRESSION:
            failure = ET.SubElement(case, "failure", message=failure_text(judgement),
                                    type="regression")
            failure.text = detail
        elif judgement.verdict in (Verdict.MISSING, Verdict.IGNORED):
            reason = ("ignored by the thresholds" if judgement.verdict is Verdict.IGNORED
                      else "the baseline or the candidate has no value for it")
            ET.SubElement(case, "skipped", message=reason)
        else:
            ET.SubElement(case, "system-out").text = f"{judgement.verdict.value}: {detail}"
    root = ET.Element("testsuites", name=SUITE, tests=suite.get("tests", "0"),
                      failures=str(failures))
    root.append(suite)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(path: Path, outcome: Outcome) -> None:
    try:
        path.write_text(junit_xml(outcome), encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write the JUnit file {path}: {exc.strerror or exc}") from None
