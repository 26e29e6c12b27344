"""Signal dispositions for tests that send themselves SIGINT (Ctrl-C).

A test process runs many event loops before the unit tests; one that installed its own
SIGINT handling and was never closed leaves it behind, and a Ctrl-C test would then test
that instead of what a user's fresh ``skctl`` process does.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def default_sigint() -> Iterator[None]:
    """Python's default SIGINT handler for the test, the previous one back after it."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)
