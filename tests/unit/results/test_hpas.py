from pathlib import Path

import pytest

from simkube.results import hpas
from simkube.results.hpas import HpaRow, HpaTracker, scale_events, summaries
from simkube.results.karpenter_scaling import At
from simkube.results.model import ResultsError

pytestmark = pytest.mark.unit


def _hpa(desired: int | None, current: int | None, *, namespace: str = "sim-shop") -> dict:
    status = {k: v for k, v in (("desiredReplicas", desired), ("currentReplicas", current))
              if v is not None}
    return {"metadata": {"name": "web", "namespace": namespace}, "status": status}


def test_scale_events_count_changes_of_computed_values_only() -> None:
    pairs = [(d, 1) for d in (0, 1, 1, 3, 5, 5, 2, 1)]
    assert scale_events(pairs) == (2, 2)
    assert scale_events([(0, 0), (0, 1)]) == (0, 0)
    assert scale_events([(2, 2)]) == (0, 0)


def test_a_first_decision_away_from_the_current_replicas_is_a_rescale() -> None:
    assert scale_events([(0, 1), (2, 1), (2, 2), (4, 2)]) == (2, 0)
    assert scale_events([(1, 3), (1, 1)]) == (0, 1)
    assert scale_events([(3, 0), (4, 3)]) == (1, 0)  # current unknown: no first event


def test_the_tracker_writes_a_row_per_change_named_without_the_prefix() -> None:
    tracker = HpaTracker(prefix="sim")
    seen = [tracker.observe(_hpa(d, c), at=At(wall_s=t, trace_s=t * 10))
            for t, (d, c) in enumerate([(None, None), (1, 1), (1, 1), (3, 1), (3, 3)])]
    assert [row.hpa if row else None for row in seen] == [
        "shop/web", "shop/web", None, "shop/web", "shop/web"]
    assert [(r.trace_s, r.desired, r.current) for r in tracker.rows] == [
        (0, 0, 0), (10, 1, 1), (30, 3, 1), (40, 3, 3)]
    assert tracker.observe(_hpa(5, 5, namespace="other"), at=At(wall_s=9, trace_s=9)) is None


def test_summaries_weight_replicas_by_trace_time() -> None:
    rows = [HpaRow(wall_s=0, trace_s=0, hpa="shop/web", desired=0, current=0),
            HpaRow(wall_s=1, trace_s=10, hpa="shop/web", desired=1, current=1),
            HpaRow(wall_s=2, trace_s=40, hpa="shop/web", desired=4, current=1),
            HpaRow(wall_s=3, trace_s=50, hpa="shop/web", desired=4, current=4),
            HpaRow(wall_s=4, trace_s=70, hpa="shop/web", desired=2, current=2)]
    result = summaries(rows, end_trace_s=110)["shop/web"]
    assert result["scale_events"] == 2
    assert (result["scale_ups"], result["scale_downs"]) == (1, 1)
    assert (result["peak_desired"], result["min_desired"], result["final_desired"]) == (4, 1, 2)
    # desired: 1 for 30 s, 4 for 30 s, 2 for 40 s over 100 s
    assert result["mean_desired"] == pytest.approx((30 + 120 + 80) / 100)
    assert result["mean_current"] == pytest.approx((30 + 10 + 80 + 80) / 100)


def test_rows_round_trip_through_the_file(tmp_path: Path) -> None:
    out = hpas.open_file(tmp_path)
    row = HpaRow(wall_s=1.5, trace_s=15.0, hpa="shop/web", desired=3, current=2)
    out.write(hpas.line(row))
    out.close()
    assert hpas.read(tmp_path / hpas.HPAS) == [row]
    assert hpas.read(tmp_path / "missing.csv") == []


def test_a_damaged_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / hpas.HPAS
    path.write_text("wall_s,trace_s,hpa,desired,current\n1,2,shop/web,three,1\n")
    with pytest.raises(ResultsError, match="line 2"):
        hpas.read(path)
    path.write_text("a,b\n")
    with pytest.raises(ResultsError, match="header"):
        hpas.read(path)
