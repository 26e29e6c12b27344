"""The CA benchmarks' one way of finding the binary, or saying why they cannot run."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.ca_binary import missing_ca

pytestmark = pytest.mark.unit


def test_a_missing_binary_is_one_line_naming_it(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIMKUBE_CLUSTER_AUTOSCALER", str(tmp_path / "nowhere"))
    line = missing_ca("autoscaler_loop")
    assert line is not None
    assert line["figure"] == "autoscaler_loop"
    assert line["ran"] is False
    assert str(tmp_path / "nowhere") in line["reason"]

