"""The sk-ctrl command: its group options, its one subcommand, errors as messages."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from simkube.ctrl.main import cli, main

pytestmark = pytest.mark.unit


def test_serve_is_the_command() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    assert "serve" in result.output


def test_the_log_level_is_checked_and_passed_down() -> None:
    result = CliRunner().invoke(cli, ["--log-level", "loud", "serve", "--help"])
    assert result.exit_code == 2
    assert "loud" in result.output
    assert CliRunner().invoke(cli, ["--log-level", "debug", "serve", "--help"]).exit_code == 0


def test_a_usage_error_exits_non_zero_without_a_traceback(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.argv", ["sk-ctrl", "serve", "--driver", "127.0.0.1:1",
                                     "--results-dir", "/tmp/x", "--retry-budget", "0"])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code != 0
    err = capsys.readouterr().err
    assert "--retry-budget must be positive" in err
    assert "Traceback" not in err
