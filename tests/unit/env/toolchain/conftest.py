"""Every toolchain test gets its own binary cache: nothing reads or writes ``~/.cache``."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def private_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("SIMKUBE_CACHE_DIR", str(tmp_path))
    return tmp_path
