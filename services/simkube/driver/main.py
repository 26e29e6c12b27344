"""``sk-driver``: ``serve`` runs the Driver gRPC service, ``replay`` replays one trace and exits.

Commands live in their own modules; this one wires them and is the one place where a user's
error becomes a message and an exit code instead of a traceback.
"""

from __future__ import annotations

import click

from simkube.core.cli import run_command
from simkube.core.logs import configure_logging
from simkube.driver.replay_command import replay_command
from simkube.driver.serve_command import serve_command


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--log-level", default="warning", show_default=True,
              type=click.Choice(["debug", "info", "warning", "error"]),
              help="Verbosity of the structured log on stderr.")
@click.option("--log-json/--log-console", default=None,
              help="Log format (default: console on a terminal, JSON otherwise).")
def cli(log_level: str, log_json: bool | None) -> None:
    """Replay traces into a simulated Kubernetes cluster."""
    configure_logging(level=log_level, json_output=log_json)


cli.add_command(replay_command, name="replay")
cli.add_command(serve_command, name="serve")


def main() -> None:
    """Run sk-driver; user errors print a message and exit non-zero, never a traceback."""
    run_command(cli)
