"""``sk-ctrl``: the controller for the Simulation resource (``serve``).

This module wires the command and is the one place where a user's error becomes a message
and an exit code instead of a traceback.
"""

from __future__ import annotations

import click

from simkube.core.cli import run_command
from simkube.core.logs import configure_logging
from simkube.ctrl.serve_command import serve_command


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--log-level", default="info", show_default=True,
              type=click.Choice(["debug", "info", "warning", "error"]),
              help="Verbosity of the structured log on stderr.")
@click.option("--log-json/--log-console", default=None,
              help="Log format (default: console on a terminal, JSON otherwise).")
@click.pass_context
def cli(ctx: click.Context, log_level: str, log_json: bool | None) -> None:
    """Run Simulations: one at a time, through sk-driver, with results on disk."""
    ctx.obj = {"log_level": log_level}
    configure_logging(level=log_level, json_output=log_json)


cli.add_command(serve_command, name="serve")


def main() -> None:
    """Run sk-ctrl; user errors print a message and exit non-zero, never a traceback."""
    run_command(cli)
