"""Earlier results of a reused Simulation name are set aside, never appended to."""

from __future__ import annotations

from pathlib import Path

import pytest

from simkube.ctrl.recording import set_aside_previous

pytestmark = pytest.mark.unit


def test_an_older_namesakes_results_move_aside(tmp_path: Path) -> None:
    old = tmp_path / "shop" / "run-2"
    old.mkdir(parents=True)
    (old / "summary.json").write_text("{}")
    moved = set_aside_previous(tmp_path / "shop")
    assert moved is not None
    assert moved.name.startswith("shop.previous-")
    assert (moved / "run-2" / "summary.json").read_text() == "{}"
    assert not (tmp_path / "shop").exists()


def test_nothing_to_set_aside(tmp_path: Path) -> None:
    assert set_aside_previous(tmp_path / "absent") is None
    (tmp_path / "empty").mkdir()
    assert set_aside_previous(tmp_path / "empty") is None
    assert (tmp_path / "empty").is_dir()


def test_a_failed_rename_is_not_an_error(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "shop" / "run-1").mkdir(parents=True)

    def refuse(self: Path, target: Path) -> Path:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "rename", refuse)
    assert set_aside_previous(tmp_path / "shop") is None
    assert (tmp_path / "shop" / "run-1").is_dir()
