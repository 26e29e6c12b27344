from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from simkube.check.baseline import BaselineError, read_baseline, write_baseline
from simkube.check.figures import Figure, Spread, read_runs
from simkube.core.version import product_version
from tests.unit.check.runs import write_run

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("name", ["baseline.yaml", "baseline.json"])
def test_a_written_baseline_reads_back_as_the_same_figures(tmp_path: Path, name: str) -> None:
    runs = [write_run(tmp_path, run=n, node_hours=hours, pending_p50_s=None)
            for n, hours in ((1, 8.0), (2, 10.0))]
    sample = read_runs(runs, label="shop")
    path = tmp_path / name
    write_baseline(path, sample, extra={"trace": "dsb.sktrace"})
    if name.endswith(".json"):
        json.loads(path.read_text())  # really JSON
    back = read_baseline(path)
    assert back.figures == sample.figures
    assert back.figures[Figure.NODE_HOURS] == Spread(mean=9.0, low=8.0, high=10.0, count=2)
    assert back.figures[Figure.PENDING_P50_S] is None
    assert back.label == "shop"
    assert back.provenance["trace"] == "dsb.sktrace"
    assert back.provenance["speed"] == 10.0
    assert back.provenance["autoscaler"] == "cluster-autoscaler"
    assert back.provenance["simkube"] == product_version()
    assert back.provenance["runs"] == [1, 2]


def _document(tmp_path: Path) -> dict[str, object]:
    path = tmp_path / "b.yaml"
    write_baseline(path, read_runs([write_run(tmp_path)], label="shop"))
    tree = yaml.safe_load(path.read_text())
    assert isinstance(tree, dict)
    return tree


@pytest.mark.parametrize(("edit", "message"), [
    (lambda t: t.pop("kind"), "kind is not 'simkube-baseline'"),
    (lambda t: t.update(version=3), "version is 3, expected 1"),
    (lambda t: t.update(figures=[1]), "figures is not a mapping"),
    (lambda t: t["figures"].update(cost={}), "figures.cost is not a figure"),
    (lambda t: t["figures"].update(cost_usd=4.0),
     "figures.cost_usd is not a mapping of mean, min, max, repetitions"),
    (lambda t: t["figures"]["node_hours"].update(max="9"),
     "figures.node_hours.max is '9', not a number"),
    (lambda t: t["figures"]["node_hours"].update(min=9.0),
     "figures.node_hours: expected min <= mean <= max"),
    (lambda t: t.update(provenance=[]), "provenance is not a mapping"),
])
def test_a_damaged_baseline_names_the_field(tmp_path: Path, edit: object,
                                            message: str) -> None:
    tree = _document(tmp_path)
    edit(tree)  # type: ignore[operator]
    path = tmp_path / "edited.yaml"
    path.write_text(yaml.safe_dump(tree))
    with pytest.raises(BaselineError) as error:
        read_baseline(path)
    assert message in error.value.message
    assert error.value.exit_code == 2


def test_not_yaml_is_said(tmp_path: Path) -> None:
    path = tmp_path / "b.yaml"
    path.write_text("figures: [")
    with pytest.raises(BaselineError, match="neither YAML nor JSON"):
        read_baseline(path)
