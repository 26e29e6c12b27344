"""``skctl env``: build the upstream binaries and run a local simulated cluster.

These commands are thin: they parse flags, call ``simkube.env`` and render the result with
rich. Every failure a user can cause arrives as a ``SimkubeError`` and is printed by
``skctl.main`` without a traceback.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, replace
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from simkube.core.durations import parse_duration
from simkube.env import lifecycle, restarting
from simkube.env.autoscalers import cluster_autoscaler as ca
from simkube.env.autoscalers.karpenter_catalog import ConsolidationPolicy, Disruption
from simkube.env.autoscalers.kinds import AutoscalerKind
from simkube.env.paths import DEFAULT_ENV_NAME, validate_env_name
from simkube.env.status import Health, environment_status, load_state
from simkube.env.toolchain.catalog import ALL_GROUPS, plan_builds
from simkube.env.toolchain.ci_cache import ci_cache
from simkube.skctl.build_display import build_with_progress

console = Console(stderr=True)
name_option = click.option("--name", default=DEFAULT_ENV_NAME, show_default=True,
                           callback=lambda _c, _p, v: validate_env_name(v),
                           help="Environment name; several can run side by side.")


@click.group("env")
def env_group() -> None:
    """Build binaries and run a local simulated cluster on loopback."""


@env_group.command("build")
@click.option("--autoscaler", is_flag=True, help="Also build cluster-autoscaler.")
@click.option("--only", "only", multiple=True, metavar="GROUP",
              type=click.Choice([group.name for group in ALL_GROUPS]),
              help="Build only this group (repeatable), e.g. what 'make demo' runs.")
@click.option("--force", is_flag=True, help="Rebuild even when the cache has the binaries.")
@click.option("--print-cache-key", is_flag=True,
              help="Build nothing: print the cache directory and a key for a CI cache of "
                   "these binaries (dir=..., key=..., for $GITHUB_OUTPUT; docs/ci.md).")
def build_command(autoscaler: bool, only: tuple[str, ...], force: bool,
                  print_cache_key: bool) -> None:
    """Build (once) and cache the upstream binaries from the Go module proxy."""
    if autoscaler and only:
        raise click.UsageError("--autoscaler and --only exclude each other "
                               "(--only cluster-autoscaler builds it)")
    groups = plan_builds(only=only, autoscaler=autoscaler)
    if print_cache_key:
        if force:
            raise click.UsageError("--print-cache-key builds nothing: leave out --force")
        click.echo("\n".join(ci_cache(groups).output_lines()))
        return
    results = build_with_progress(groups, force=force, console=console)
    table = Table(title="upstream binaries")
    for column in ("group", "version", "result", "seconds", "cache entry"):
        table.add_column(column)
    for result in results:
        table.add_row(result.group.name, result.group.version,
                      "cached" if result.cached else "built", f"{result.seconds:.1f}",
                      str(result.path))
    console.print(table)


@env_group.command("up")
@name_option
@click.option("--nodes", type=click.IntRange(0, 50_000), default=0, show_default=True,
              help="Fake nodes to create from the node template.")
@click.option("--node-template", type=click.Path(path_type=Path),
              help="Node manifest used for --nodes ('{name}' is replaced).")
@click.option("--scheduler-config", type=click.Path(path_type=Path),
              help="A KubeSchedulerConfiguration for the simulated scheduler.")
@click.option("--port", "apiserver_port", type=int, help="kube-apiserver port (default: free).")
@click.option("--services", is_flag=True,
              help="Also run sk-cloudprov, sk-driver and sk-ctrl (for 'skctl run').")
@click.option("--node-groups", type=click.Path(path_type=Path, dir_okay=False),
              help="sk-cloudprov's node groups for --services (default: two priced groups).")
@click.option("--autoscaler", type=click.Choice([k.value for k in AutoscalerKind]),
              is_flag=False, flag_value=AutoscalerKind.CLUSTER_AUTOSCALER.value, default=None,
              help="Also run an autoscaler (implies --services): cluster-autoscaler (the "
                   "default when no value is given) against sk-cloudprov, or karpenter.")
@click.option("--autoscaler-binary", type=click.Path(path_type=Path),
              help=f"The cluster-autoscaler to run (default: ${ca.BINARY_ENV}, "
                   "else the binary cache).")
@click.option("--autoscaler-flag", "autoscaler_flags", multiple=True, metavar="--NAME=VALUE",
              help="An autoscaler flag replacing the environment's tuning "
                   "(repeatable), e.g. --autoscaler-flag=--expander=price.")
@click.option("--cloudprov-front/--no-cloudprov-front", default=True, show_default=True,
              help="cluster-autoscaler: reach sk-cloudprov through sk-cloudprov-front, which "
                   "answers CA's repeated per-node calls from a cache (docs/cloudprov.md).")
@click.option("--consolidation-policy",
              type=click.Choice([p.value for p in ConsolidationPolicy]),
              help="Karpenter: which nodes its NodePools consolidate "
                   "(default WhenEmptyOrUnderutilized).")
@click.option("--consolidate-after", metavar="DURATION",
              help="Karpenter: how long a node must be consolidatable first, in trace time "
                   "(e.g. 30s, 5m, or Never; default 0s, Karpenter's own).")
@click.option("--metrics-server", is_flag=True,
              help="Also run metrics-server over KWOK's emulated pod usage, so HPAs and "
                   "'kubectl top' work and replays play recorded usage (docs/hpa.md).")
def up_command(  # noqa: PLR0917  # click passes every option as a parameter
        name: str, nodes: int, node_template: Path | None, scheduler_config: Path | None,
        apiserver_port: int | None, services: bool, node_groups: Path | None,
        autoscaler: str | None, autoscaler_binary: Path | None,
        autoscaler_flags: tuple[str, ...], cloudprov_front: bool,
        consolidation_policy: str | None, consolidate_after: str | None,
        metrics_server: bool) -> None:
    """Start etcd, the control plane and kwok; wait until the cluster is usable."""
    kind = AutoscalerKind(autoscaler) if autoscaler else None
    if node_groups is not None and not (services or kind):
        raise click.UsageError("--node-groups needs --services or --autoscaler")
    if autoscaler_flags and not kind:
        raise click.UsageError("--autoscaler-flag needs --autoscaler")
    if autoscaler_binary is not None and kind is not AutoscalerKind.CLUSTER_AUTOSCALER:
        raise click.UsageError("--autoscaler-binary needs --autoscaler cluster-autoscaler")
    if not cloudprov_front and kind is not AutoscalerKind.CLUSTER_AUTOSCALER:
        raise click.UsageError("--no-cloudprov-front needs --autoscaler cluster-autoscaler")
    if (consolidation_policy or consolidate_after) and kind is not AutoscalerKind.KARPENTER:
        raise click.UsageError("--consolidation-policy and --consolidate-after need "
                               "--autoscaler karpenter")
    disruption = disruption_settings(policy=consolidation_policy, after=consolidate_after)
    if kind is AutoscalerKind.CLUSTER_AUTOSCALER:
        found = ca.resolve(autoscaler_binary)
        console.print(f"cluster-autoscaler {found.version or '(version unknown)'}: {found.path} "
                      f"(from {found.source})")
        if found.warning:
            console.print(f"[yellow]warning:[/] {found.warning}")
        autoscaler_binary = found.path
    started = time.monotonic()
    with console.status(f"starting environment {name!r}"):
        env, created = lifecycle.up(lifecycle.UpOptions(
            name=name, nodes=nodes, node_template=node_template,
            scheduler_config=scheduler_config, apiserver_port=apiserver_port,
            services=services or kind is not None, node_groups=node_groups, autoscaler=kind,
            autoscaler_binary=autoscaler_binary, autoscaler_flags=autoscaler_flags,
            cloudprov_front=cloudprov_front, disruption=disruption,
            metrics_server=metrics_server))
    if not created:
        console.print(f"environment {name!r} is already up (API server {env.api_server})")
    else:
        console.print(f"[green]✓[/] environment {name!r} ready in "
                      f"{time.monotonic() - started:.1f}s: API server {env.api_server}, "
                      f"{env.nodes} fake node(s)")
    console.print(f"kubeconfig: {env.kubeconfig}")
    for key, address in env.addresses.items():
        console.print(f"{key}: {address}")


def disruption_settings(*, policy: str | None, after: str | None) -> Disruption:
    """Karpenter's NodePool disruption settings from the flags; a bad duration is exit 2."""
    chosen = Disruption()
    if policy:
        chosen = replace(chosen, policy=ConsolidationPolicy(policy))
    if after:
        ms = (None if after.strip() == "Never"
              else parse_duration(after, field="--consolidate-after", allow_zero=True))
        chosen = replace(chosen, consolidate_after_ms=ms)
    return chosen


@env_group.command("down")
@name_option
def down_command(name: str) -> None:
    """Stop every component and remove the environment's files."""
    env = lifecycle.down(name)
    console.print(f"[green]✓[/] environment {name!r} stopped "
                  f"({len(env.components)} processes)")


@env_group.command("restart")
@name_option
@click.argument("component")
@click.option("--kill", is_flag=True, help="SIGKILL it (a crash) instead of a graceful stop.")
def restart_command(name: str, component: str, kill: bool) -> None:
    """Stop one component (e.g. sk-cloudprov, cluster-autoscaler) and start it again."""
    started = time.monotonic()
    with console.status(f"restarting {component} in {name!r}"):
        record = restarting.restart(name, component, kill=kill)
    console.print(f"[green]✓[/] {component} {'killed and ' if kill else ''}restarted in "
                  f"{time.monotonic() - started:.1f}s (pid {record.pid}); log: {record.log}")


@env_group.command("status")
@name_option
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
@click.pass_context
def status_command(ctx: click.Context, name: str, as_json: bool) -> None:
    """Each component's pid, port and health; exit 1 when any is not running."""
    status = environment_status(name)
    if as_json:
        click.echo(json.dumps({**asdict(status), "healthy": status.healthy}, indent=2))
    else:
        table = Table(title=f"environment {status.name} — {status.api_server}")
        for column in ("component", "pid", "port", "health", "detail"):
            table.add_column(column)
        colours = {Health.RUNNING: "green", Health.UNHEALTHY: "yellow", Health.CRASHED: "red"}
        for c in status.components:
            table.add_row(c.name, str(c.pid), str(c.port),
                          f"[{colours[c.health]}]{c.health.value}[/]", c.detail[:60])
        Console().print(table)
    ctx.exit(0 if status.healthy else 1)


@env_group.command("kubeconfig")
@name_option
def kubeconfig_command(name: str) -> None:
    """Print the path of the environment's admin kubeconfig."""
    click.echo(load_state(name).kubeconfig)


