from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from simkube.core.cli import EXIT_INTERRUPTED, SPEED, run_command
from simkube.core.errors import ConfigError
from simkube.core.simtime import TimeScale

pytestmark = pytest.mark.unit


@click.command()
@click.option("--mode", type=click.Choice(["ok", "code", "user", "abort"]), required=True)
@click.pass_context
def sample(ctx: click.Context, mode: str) -> None:
    if mode == "code":
        ctx.exit(7)
    if mode == "user":
        raise ConfigError("bad port", hint="pick another")
    if mode == "abort":
        raise click.exceptions.Abort


@pytest.mark.parametrize(("mode", "code"), [("ok", 0), ("code", 7), ("user", 2),
                                             ("abort", EXIT_INTERRUPTED)])
def test_exit_codes(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                    mode: str, code: int) -> None:
    monkeypatch.setattr("sys.argv", ["prog", "--mode", mode])
    with pytest.raises(SystemExit) as info:
        run_command(sample, prefix="prog: ")
    assert info.value.code == code
    if mode == "user":
        assert capsys.readouterr().err == "prog: error: bad port\n  hint: pick another\n"


def test_usage_errors_show_clicks_message(monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.argv", ["prog", "--mode", "nope"])
    with pytest.raises(SystemExit) as info:
        run_command(sample)
    assert info.value.code == 2
    assert "Invalid value for '--mode'" in capsys.readouterr().err


@click.command()
@click.option("--pace", type=SPEED, default=2.0)
def paced(pace: TimeScale) -> None:
    click.echo(repr(pace))


def test_a_speed_option_gives_the_time_scale_or_a_usage_error_naming_the_option() -> None:
    assert CliRunner().invoke(paced, []).output == "TimeScale(speed=2.0)\n"
    assert CliRunner().invoke(paced, ["--pace", "1e6"]).output == \
        "TimeScale(speed=1000000.0)\n"
    refused = CliRunner().invoke(paced, ["--pace", "2e6"])
    assert refused.exit_code == 2
    assert "Invalid value for '--pace': --pace 2e+06 is above the maximum 1e+06" \
        in refused.output
