from __future__ import annotations

import io
import json

import pytest

from simkube.core.logs import configure_logging, get_logger

pytestmark = pytest.mark.unit


def test_json_output_when_not_a_terminal() -> None:
    stream = io.StringIO()
    configure_logging(level="info", stream=stream)
    get_logger("t").info("started", port=8080)
    record = json.loads(stream.getvalue().strip().splitlines()[-1])
    assert record["event"] == "started"
    assert record["port"] == 8080
    assert record["level"] == "info"
    assert "timestamp" in record


def test_level_filters() -> None:
    stream = io.StringIO()
    configure_logging(level="warning", stream=stream, json_output=True)
    get_logger("t").info("hidden")
    get_logger("t").warning("shown")
    assert "hidden" not in stream.getvalue()
    assert "shown" in stream.getvalue()


def test_unknown_level_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown log level 'loud'"):
        configure_logging(level="loud")


def test_default_stream_follows_sys_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    first = io.StringIO()
    monkeypatch.setattr("sys.stderr", first)
    configure_logging(level="info", json_output=True)
    first.close()  # a harness that captured stderr closes its buffer afterwards
    second = io.StringIO()
    monkeypatch.setattr("sys.stderr", second)
    get_logger("t").info("still logged")
    assert "still logged" in second.getvalue()
