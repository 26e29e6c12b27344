from __future__ import annotations

from pathlib import Path

import pytest

from simkube.check.figures import Figure
from simkube.check.thresholds import (
    Direction,
    Threshold,
    ThresholdsError,
    default_thresholds,
    load_thresholds,
)

pytestmark = pytest.mark.unit


def test_the_shipped_defaults_cover_every_figure_and_only_rises_fail() -> None:
    defaults = default_thresholds()
    assert set(defaults) == set(Figure)
    assert all(t.direction is Direction.INCREASE and not t.ignore for t in defaults.values())
    assert defaults[Figure.COST_USD] == Threshold(relative=0.03)
    assert defaults[Figure.NODE_HOURS] == Threshold(relative=0.03)
    assert defaults[Figure.PENDING_P90_S] == Threshold(relative=0.10, absolute=1.0)
    assert defaults[Figure.NEVER_SCHEDULED] == Threshold(absolute=0.0)


def test_a_file_replaces_the_figures_it_lists_whole(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("version: 1\nfigures:\n"
                    "  pending_p90_s: {relative: 0.2}\n"
                    "  peak_nodes: {absolute: 2, direction: both}\n"
                    "  scale_ups: {ignore: true}\n")
    loaded = load_thresholds(path)
    assert loaded[Figure.PENDING_P90_S] == Threshold(relative=0.2)  # no absolute floor left
    assert loaded[Figure.PEAK_NODES] == Threshold(absolute=2.0, direction=Direction.BOTH)
    assert loaded[Figure.SCALE_UPS].ignore
    assert loaded[Figure.COST_USD] == default_thresholds()[Figure.COST_USD]
    assert load_thresholds(None) == default_thresholds()


def test_the_tolerance_is_the_larger_of_relative_and_absolute() -> None:
    assert Threshold(relative=0.1, absolute=1.0).tolerance(20.0) == 2.0
    assert Threshold(relative=0.1, absolute=1.0).tolerance(2.0) == 1.0
    assert Threshold(relative=0.1).tolerance(-30.0) == 3.0


@pytest.mark.parametrize(("text", "message"), [
    ("figures: [", "is not YAML"),
    ("- 1\n", "the top level is not a mapping"),
    ("figures: {}\n", "version is None, expected 1"),
    ("version: 2\n", "version is 2, expected 1"),
    ("version: 1\nfigure: {}\n", "figure is not a field"),
    ("version: 1\nfigures: [cost_usd]\n", "figures is not a mapping"),
    ("version: 1\nfigures: {cost: {relative: 1}}\n", "figures.cost is not a figure"),
    ("version: 1\nfigures: {cost_usd: 0.05}\n", "figures.cost_usd is not a mapping"),
    ("version: 1\nfigures: {cost_usd: {relativ: 0.05}}\n",
     "figures.cost_usd.relativ is not a threshold field"),
    ("version: 1\nfigures: {cost_usd: {direction: both}}\n",
     "figures.cost_usd has neither relative nor absolute"),
    ("version: 1\nfigures: {cost_usd: {relative: 5%}}\n",
     "figures.cost_usd.relative is '5%', not a number"),
    ("version: 1\nfigures: {cost_usd: {relative: true}}\n",
     "figures.cost_usd.relative is True, not a number"),
    ("version: 1\nfigures: {node_hours: {absolute: -1}}\n",
     "figures.node_hours.absolute is -1: it must be a finite number, 0 or more"),
    ("version: 1\nfigures: {node_hours: {absolute: .inf}}\n",
     "figures.node_hours.absolute is inf"),
    ("version: 1\nfigures: {node_hours: {relative: 0.1, direction: up}}\n",
     "figures.node_hours.direction is 'up'"),
    ("version: 1\nfigures: {node_hours: {ignore: yes please}}\n",
     "figures.node_hours.ignore is 'yes please', not true or false"),
])
def test_each_mistake_is_one_error_naming_the_field(tmp_path: Path, text: str,
                                                    message: str) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(text)
    with pytest.raises(ThresholdsError) as error:
        load_thresholds(path)
    assert message in error.value.message
    assert error.value.exit_code == 2


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ThresholdsError, match=r"thresholds file .*nope.yaml does not exist"):
        load_thresholds(tmp_path / "nope.yaml")
