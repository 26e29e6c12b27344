"""skctl's entry point: the command tree and the one place user errors become exit codes.

Subcommand groups live in their own modules (``env_commands``, ``trace_commands``, ...) and are
attached here, so adding a feature never means editing another feature's module.
"""

from __future__ import annotations

import click

from simkube.core.cli import run_command
from simkube.core.logs import configure_logging
from simkube.core.version import UPSTREAM, product_version
from simkube.skctl.check_commands import check_command
from simkube.skctl.env_commands import env_group
from simkube.skctl.export_commands import export_command, tracer_group
from simkube.skctl.report_commands import compare_command, report_command
from simkube.skctl.sim_commands import SIMULATION_COMMANDS
from simkube.skctl.study import study_group
from simkube.skctl.sweep_commands import sweep_group
from simkube.skctl.trace_commands import trace_group


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--log-level", default="warning", show_default=True,
              type=click.Choice(["debug", "info", "warning", "error"]),
              help="Verbosity of the structured log on stderr.")
def cli(log_level: str) -> None:
    """Record, replay, autoscale and report simulated Kubernetes clusters."""
    configure_logging(level=log_level)


@cli.command()
def version() -> None:
    """Print skctl's version and the upstream versions it builds and runs."""
    click.echo(f"skctl {product_version()}")
    click.echo(f"kubernetes {UPSTREAM.kubernetes}  etcd {UPSTREAM.etcd}  "
               f"kwok {UPSTREAM.kwok}  cluster-autoscaler {UPSTREAM.cluster_autoscaler}")


cli.add_command(env_group)
cli.add_command(export_command)
cli.add_command(tracer_group)
cli.add_command(trace_group)
cli.add_command(report_command)
cli.add_command(compare_command)
cli.add_command(check_command)
cli.add_command(study_group)
cli.add_command(sweep_group)
for command in SIMULATION_COMMANDS:
    cli.add_command(command)


def main() -> None:
    """Run skctl; a ``SimkubeError`` prints its message and exits with its code."""
    run_command(cli)
