from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from dataclasses import replace

import pytest
from markdown import markdown as render_markdown
from rich.console import Console

from simkube.check.judging import Outcome, judge
from simkube.check.rendering import headline, json_data, markdown, rich_table
from simkube.check.thresholds import default_thresholds
from tests.unit.check.runs import sample

pytestmark = pytest.mark.unit


def _regressed() -> Outcome:
    return judge(baseline=sample("base", node_hours=(7.0, 9.0)),
                 candidate=sample("fix", node_hours=(10.0,), cost_usd=(5.0,),
                                  pending_p50_s=(1.0,)),
                 thresholds=default_thresholds())


def test_the_headline_names_what_moved() -> None:
    assert headline(_regressed()) == (
        "REGRESSION: fix against base: cost +$1.000 (+25.0%), "
        "node hours +2.000 h (+25.0%) (2 of 7 figures)")
    passed = judge(baseline=sample("base"), candidate=sample("fix"),
                   thresholds=default_thresholds())
    assert headline(passed) == "PASS: fix is within the limits on all 7 figures against base"


def test_markdown_is_a_table_with_a_verdict_heading() -> None:
    text = markdown(_regressed())
    lines = text.splitlines()
    assert lines[0].startswith("### ❌ skctl check: REGRESSION: fix against base")
    assert lines[2] == "| figure | baseline | candidate | change | limit | verdict |"
    assert lines[3] == "|:---|---:|---:|---:|---:|:---|"
    rows = [line for line in lines[4:] if line.startswith("| ")]
    assert len(rows) == 7
    assert all(row.count(" | ") == 5 for row in rows)
    assert ("| node hours | 8.000 h (7.000 h … 9.000 h, 2 runs) | 10.000 h | +2.000 h (+25.0%) "
            "| ≤ 9.240 h | ❌ regression |") in rows
    assert "| pending p50 | 2.0 s | 1.0 s | -1.0 s (-50.0%) | ≤ 3.0 s | ✅ ok |" in rows


def test_the_rich_table_and_json_say_the_same() -> None:
    outcome = _regressed()
    out = io.StringIO()
    Console(file=out, width=160).print(rich_table(outcome))
    table = out.getvalue()
    assert "regression" in table
    assert "+2.000 h (+25.0%)" in table
    data = json.loads(json.dumps(json_data(outcome)))
    assert data["passed"] is False
    hours = next(f for f in data["figures"] if f["figure"] == "node_hours")
    assert hours["verdict"] == "regression"
    assert hours["baseline"] == {"mean": 8.0, "min": 7.0, "max": 9.0, "repetitions": 2}
    assert hours["upper"] == pytest.approx(9.24)
    assert hours["direction"] == "increase"


def test_markdown_renders_as_a_heading_a_table_and_a_list() -> None:
    """Through a real Markdown renderer (Python-Markdown with tables, as GitHub's GFM reads
    pipe tables): every figure a row of six cells, dollars shown as dollars."""
    rendered = render_markdown(markdown(_regressed()), extensions=["tables"])
    page = ET.fromstring(f"<page>{rendered}</page>")  # noqa: S314  # our own text
    heading = page.find("h3")
    assert heading is not None
    assert "".join(heading.itertext()).startswith("❌ skctl check: REGRESSION: fix against base:"
                                                  " cost +$1.000")
    table = page.find("table")
    assert table is not None
    assert ["".join(th.itertext()) for th in table.iter("th")] == [
        "figure", "baseline", "candidate", "change", "limit", "verdict"]
    rows = [["".join(td.itertext()) for td in tr.iter("td")] for tr in table.iter("tr")][1:]
    assert len(rows) == 7
    assert all(len(row) == 6 for row in rows)
    assert rows[0] == ["cost", "$4.000", "$5.000", "+$1.000 (+25.0%)", "≤ $4.120", "❌ regression"]
    provenance = ["".join(li.itertext()) for li in page.iter("li")]
    assert [item.split(":")[0] for item in provenance] == ["baseline", "candidate"]


def test_markdown_provenance_reads_plainly() -> None:
    outcome = _regressed()
    base = replace(outcome.baseline, provenance={"simulation": "dsb-1m", "runs": [1, 2, 3],
                                                 "speed": 10.0, "trace_seconds": 2040.0,
                                                 "autoscaler": None})
    text = markdown(replace(outcome, baseline=base))
    assert ("- baseline: `base` (simulation dsb-1m; runs 1, 2, 3; speed 10; "
            "trace seconds 2040)") in text.splitlines()
