"""The speed a run achieved and the time its clock was held, in the report's table and
headlines; older summaries without them show neither."""

from __future__ import annotations

from pathlib import Path

import pytest

from simkube.report import load
from simkube.report.metrics import headlines, metric_values
from tests.unit.report.known_run import write_run

pytestmark = pytest.mark.unit


def test_a_held_run_reports_its_achieved_speed_and_time_held(tmp_path: Path) -> None:
    run = load(write_run(tmp_path, summary={"speed": 10.0, "driver": {
        "events_applied": 120, "events_total": 120, "objects_failed": 0,
        "achieved_speed": 8.456, "held_seconds": 4.25}}))
    values = metric_values(run)
    assert (values["driver.achieved_speed"], values["driver.held_seconds"]) == (8.456, 4.25)
    assert ("speed: 8.46x achieved of 10.00x asked, the clock held 4.2 s for the autoscaler"
            in headlines(run))


def test_an_older_summary_has_no_speed_line(tmp_path: Path) -> None:
    run = load(write_run(tmp_path))
    assert metric_values(run)["driver.achieved_speed"] is None
    assert not [line for line in headlines(run) if line.startswith("speed:")]
