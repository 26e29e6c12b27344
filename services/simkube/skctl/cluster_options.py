"""The options every skctl command that talks to a simulated cluster shares.

A command reaches the cluster through ``--kubeconfig`` or, by default, the local environment
named by ``--env``; defining the options once keeps their names and help the same everywhere.
"""

from __future__ import annotations

from pathlib import Path

import click

kubeconfig_option = click.option(
    "--kubeconfig", type=click.Path(path_type=Path, dir_okay=False),
    help="Kubeconfig of the simulated cluster (default: the local environment's).")
env_option = click.option(
    "--env", "env_name", default=None,
    help="Local environment (default: 'default') whose cluster and results to use.")
json_option = click.option("--json", "as_json", is_flag=True,
                           help="Print JSON instead of a table.")
