from __future__ import annotations

import pytest

from simkube.env.health import probe, wait_until

pytestmark = pytest.mark.unit


def test_wait_until_returns_once_the_check_passes() -> None:
    answers = iter([(False, "starting"), (False, "starting"), (True, "ok")])
    assert wait_until(lambda: next(answers), timeout=5, interval=0.01) == (True, "ok")


def test_wait_until_stops_when_the_process_dies() -> None:
    ok, detail = wait_until(lambda: (False, "x"), timeout=5, alive=lambda: False)
    assert (ok, detail) == (False, "process exited")


def test_wait_until_times_out_with_the_last_detail() -> None:
    ok, detail = wait_until(lambda: (False, "HTTP 500"), timeout=0.05, interval=0.01)
    assert not ok
    assert "timed out" in detail
    assert "HTTP 500" in detail


def test_probe_of_a_closed_port_is_unhealthy() -> None:
    ok, detail = probe("http://127.0.0.1:9/healthz", verify=False)
    assert not ok
    assert detail == "ConnectError"
