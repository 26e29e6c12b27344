"""One way to put flags on a command line, shared by skctl's environment and sk-ctrl."""

from __future__ import annotations

import pytest

from simkube.core.flags import flag_name, with_flags

pytestmark = pytest.mark.unit


def test_with_flags_replaces_namesakes_and_appends_the_rest() -> None:
    argv = ["ca", "--scan-interval=2s", "--v=2", "--expander=price"]
    assert with_flags(argv, flags={"scan-interval": "1s", "max-node-provision-time": "90s"}) \
        == ["ca", "--scan-interval=1s", "--v=2", "--expander=price",
            "--max-node-provision-time=90s"]


def test_the_last_of_several_namesakes_wins_and_other_arguments_stay() -> None:
    argv = ["sched", "--v=2", "config.yaml", "--v=4", "config.yaml"]
    assert with_flags(argv, flags={}) == ["sched", "--v=4", "config.yaml", "config.yaml"]


def test_flag_names() -> None:
    assert flag_name("--scan-interval=10s") == "--scan-interval"
    assert flag_name("--verbose") is None  # not --name=value
    assert flag_name("scan-interval=10s") is None
