from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from simkube.check.figures import Figure
from simkube.check.judging import judge
from simkube.check.junit import write_junit
from simkube.check.thresholds import Threshold, default_thresholds
from tests.unit.check.runs import sample

pytestmark = pytest.mark.unit


def test_one_testcase_per_figure_and_a_failure_with_the_numbers(tmp_path: Path) -> None:
    thresholds = {**default_thresholds(), Figure.SCALE_UPS: Threshold(relative=0.1, ignore=True)}
    outcome = judge(baseline=sample("base"), candidate=sample("fix", node_hours=(10.0,)),
                    thresholds=thresholds)
    path = tmp_path / "check.xml"
    write_junit(path, outcome)
    root = ET.parse(path).getroot()  # noqa: S314  # our own file
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("7", "1", "1")
    cases = {case.get("name"): case for case in suite.findall("testcase")}
    assert sorted(cases) == sorted(figure.value for figure in Figure)
    failure = cases["node_hours"].find("failure")
    assert failure is not None
    assert failure.get("message") == ("node hours rose 8.000 h → 10.000 h, +2.000 h (+25.0%), "
                                      "past the limit ≤ 8.240 h")
    assert cases["cost_usd"].find("failure") is None
    assert cases["scale_ups"].find("skipped") is not None
