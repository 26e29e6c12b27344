from __future__ import annotations

from pathlib import Path

import pytest

from simkube.check.figures import Figure, Spread, read_runs
from simkube.core.errors import ConfigError
from tests.unit.check.runs import BASE, write_run

pytestmark = pytest.mark.unit


def test_one_run_reads_every_figure_from_its_summary_and_timeline(tmp_path: Path) -> None:
    sample = read_runs([write_run(tmp_path)], label="shop/run-1")
    assert {f: s.mean if s else None for f, s in sample.figures.items()} == BASE
    # Peak nodes is the timeline's largest total, not the sum of the groups' peaks (4 + 3).
    assert sample.figures[Figure.PEAK_NODES] == Spread(mean=6, low=6, high=6, count=1)
    assert sample.provenance["simulation"] == "shop"
    assert sample.provenance["speed"] == 10.0
    assert sample.provenance["autoscaler"] == "cluster-autoscaler"


def test_repetitions_become_a_mean_and_a_range(tmp_path: Path) -> None:
    runs = [write_run(tmp_path, run=n, node_hours=hours)
            for n, hours in ((1, 8.0), (2, 10.0), (3, 9.0))]
    sample = read_runs(runs, label="shop")
    assert sample.figures[Figure.NODE_HOURS] == Spread(mean=9.0, low=8.0, high=10.0, count=3)
    assert sample.provenance["runs"] == [1, 2, 3]


def test_a_figure_no_run_has_is_none_and_some_runs_count_alone(tmp_path: Path) -> None:
    runs = [write_run(tmp_path, run=1, pending_p50_s=None),
            write_run(tmp_path, run=2, pending_p50_s=3.0)]
    sample = read_runs(runs, label="shop")
    assert sample.figures[Figure.PENDING_P50_S] == Spread(mean=3.0, low=3.0, high=3.0, count=1)
    assert Spread.of([None, None]) is None


def test_unfinished_and_unreadable_runs_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="still being recorded"):
        read_runs([write_run(tmp_path, finished=False)], label="shop")
    broken = write_run(tmp_path, simulation="broken")
    (broken / "summary.json").write_text("{")
    with pytest.raises(ConfigError, match=r"unreadable results: .*summary\.json: line 1"):
        read_runs([broken], label="broken")
    with pytest.raises(ConfigError, match="no runs"):
        read_runs([], label="none")


def test_figures_show_in_their_units() -> None:
    assert Figure.COST_USD.show(123.456) == "$123.46"
    assert Figure.COST_USD.show(1.1604) == "$1.160"
    assert Figure.COST_USD.show(1.1646) == "$1.165"
    assert Figure.COST_USD.show(0.01234) == "$0.0123"
    assert Figure.NODE_HOURS.show(8) == "8.000 h"
    assert Figure.PENDING_P90_S.show(20) == "20.0 s"
    assert Figure.SCALE_UPS.show(4.5) == "4.5"
    assert Figure.PEAK_NODES.show(None) == "-"
