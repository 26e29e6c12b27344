"""The sk-driver command as a user runs it: bad input ends with one message, never a traceback."""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from simkube.driver.main import main
from simkube.driver.replay_command import default_name

pytestmark = pytest.mark.unit
SK_DRIVER = str(Path(sys.executable).parent / "sk-driver")
DATA = Path(__file__).resolve().parents[2] / "data" / "simkube"
TRACE = str(DATA / "dsb-scaling.sktrace")


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SK_DRIVER, *args], capture_output=True, text=True, timeout=60,
                          check=False)


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """``main`` points structlog at the captured stderr, which pytest closes afterwards."""
    yield
    structlog.reset_defaults()
    logging.getLogger().handlers.clear()


def _main(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
          *args: str) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["sk-driver", *args])
    with pytest.raises(SystemExit) as exited:
        main()
    return int(exited.value.code or 0), capsys.readouterr().err


@pytest.mark.parametrize(("args", "code", "words"), [
    (["replay", "/no/such.sktrace", "--kubeconfig", "/dev/null"], 2, "does not exist"),
    (["replay", TRACE, "--speed", "-1"], 2, "--speed -1.0 must be a positive number"),
    (["replay", TRACE, "--duration", "90"], 2, "hint: add a unit"),
    (["replay", TRACE, "--name", "Bad_Name"], 2, "--name 'Bad_Name' is not a valid"),
    (["replay", TRACE, "--prefix", "UPPER"], 2, "--prefix 'UPPER'"),
    (["replay", TRACE, "--concurrency", "0"], 2, "--concurrency 0 must be between"),
    (["replay", TRACE, "--node-selector", "novalue"], 2, "is not KEY=VALUE"),
    (["replay", TRACE, "--kubeconfig", "/no/kubeconfig"], 2,
     "kubeconfig /no/kubeconfig does not exist"),
    (["replay", str(DATA / "ATTRIBUTION.md"), "--kubeconfig", "/dev/null"], 5, "not a trace"),
    (["serve", "--tls-cert", "c.pem"], 2, "--tls-cert and --tls-key go together"),
    (["serve", "--kubeconfig", "/no/kubeconfig"], 2, "does not exist"),
])
def test_bad_input(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                   args: list[str], code: int, words: str) -> None:
    got, stderr = _main(monkeypatch, capsys, *args)
    assert got == code, stderr
    assert words in stderr
    assert "Traceback" not in stderr


def test_the_installed_command_reports_errors_without_a_traceback() -> None:
    result = _run("replay", TRACE, "--speed", "0")
    assert result.returncode == 2
    assert result.stderr.startswith("error: --speed 0.0 must be a positive number")
    assert "Traceback" not in result.stderr
    assert "replay" in _run("--help").stdout


def test_default_names_are_valid_and_unique() -> None:
    first, second = default_name("/x/DSB_scaling.v2.sktrace"), default_name("dsb")
    assert first.startswith("dsb-scaling-v2-")
    assert first != default_name("/x/DSB_scaling.v2.sktrace")
    assert second.startswith("dsb-")
    assert default_name("___").startswith("sim-")
