from __future__ import annotations

import pytest

from simkube.core.errors import SimkubeError
from simkube.trace import TraceFormatError

pytestmark = pytest.mark.unit


def test_message_names_source_location_and_problem() -> None:
    error = TraceFormatError("bad timestamp", where="record 3", source="t.trace")
    assert str(error) == "t.trace: record 3: bad timestamp"
    assert isinstance(error, SimkubeError)
    assert error.exit_code == 5


def test_with_source_adds_the_file_once() -> None:
    error = TraceFormatError("truncated", where="record 9", hint="re-export it")
    located = error.with_source("a.trace")
    assert str(located).startswith("a.trace: record 9: truncated")
    assert "hint: re-export it" in str(located)
    assert located.with_source("b.trace") is located
