"""``skctl run``, ``status``, ``pause``, ``resume`` and ``delete``: Simulations from the terminal.

Thin commands over ``sim_manifest`` (what to create), ``sim_client`` (the API calls) and
``sim_progress`` (``--wait``). Tables and JSON go to stdout, progress and notes to stderr, so
``skctl status NAME --json | jq`` works.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console

from simkube.core.cli import SPEED
from simkube.core.errors import SimkubeError
from simkube.core.kubeapi import KubeClient
from simkube.core.simtime import TimeScale
from simkube.ctrl.decisions import state_of
from simkube.simulation.states import State
from simkube.skctl import sim_client, sim_manifest, sim_progress, sim_tables
from simkube.skctl.cluster_options import env_option, json_option, kubeconfig_option

T = TypeVar("T")
notes = Console(stderr=True)
DELETE_WAIT = 120.0


def with_cluster(kubeconfig: Path | None, env_name: str | None,
                 action: Callable[[KubeClient], Awaitable[T]]) -> T:
    """Run ``action`` with a client of ``--kubeconfig`` or local environment ``env_name``."""
    async def main() -> T:
        config = sim_client.kubeconfig_for(kubeconfig=kubeconfig, env=env_name)
        kube = await KubeClient.connect(kubeconfig=config, pool_size=4)
        try:
            return await action(kube)
        finally:
            await kube.close()

    return asyncio.run(main())


class SimulationFailedError(SimkubeError):
    """The simulation ``--wait`` followed ended Failed."""


@click.command("run")
@click.option("-f", "--file", "file", type=click.Path(path_type=Path, dir_okay=False),
              help="A Simulation manifest (YAML) instead of the flags below.")
@click.option("--name", help="Simulation name (default: <trace>-<UTC time>).")
@click.option("--trace", help="Trace file (a local path) or http(s)://, file:// URL.")
@click.option("--tracer", help="Replay a window of this sk-tracer (HOST:PORT) instead.")
@click.option("--start", help="Window start for --tracer (RFC 3339).")
@click.option("--end", help="Window end for --tracer (RFC 3339).")
@click.option("--namespace", "namespaces", multiple=True,
              help="Export only this namespace from --tracer (repeatable).")
@click.option("--speed", type=SPEED,
              help="Trace seconds per wall-clock second, at most 1e6 [default: 1].")
@click.option("--duration", help="Trace time to replay (90s, 15m, 1h30m) [default: all].")
@click.option("--repetitions", type=click.IntRange(1, 100), help="Runs [default: 1].")
@click.option("--namespace-prefix", help="Virtual namespaces are PREFIX-<ns> "
                                         "[default: virtual].")
@click.option("--node-groups", help="Node groups file on sk-ctrl's host, or configmap:NS/NAME.")
@click.option("--reset-node-groups/--no-reset-node-groups", default=None,
              help="Reset node groups to their minimum before each run [default: reset].")
@click.option("--startup-delay", help="Delay before a replayed pod runs (KWOK stage).")
@click.option("--seed", type=click.IntRange(min=0),
              help="Seed of the runs' random draws [default: from the name].")
@click.option("--timer", "timers", multiple=True, metavar="SECTION.NAME=DURATION",
              help="A timer in trace time, e.g. clusterAutoscaler.scan-interval=10s or "
                   "scheduler.podMaxBackoffSeconds=10 (repeatable; docs/simulated-time.md).")
@click.option("--hold/--no-hold", "hold", default=None,
              help="Hold the trace clock while Cluster Autoscaler reacts to unschedulable "
                   "pods [default: hold] (docs/simulated-time.md).")
@click.option("--max-hold", metavar="DURATION",
              help="Wall time one hold lasts at most [default: 2s].")
@click.option("--hpa", type=click.Choice(["active", "removed"]),
              help="The trace's HPAs act (active), or are left out so workloads keep their "
                   "recorded replicas (removed) [default: active].")
@click.option("--wait", is_flag=True, help="Follow the simulation until it ends.")
@click.option("--timeout", type=click.FloatRange(min=1), help="Give up waiting after SECONDS.")
@kubeconfig_option
@env_option
def run_command(  # noqa: PLR0917  # click passes every option as a parameter
        file: Path | None, name: str | None, trace: str | None, tracer: str | None,
        start: str | None, end: str | None, namespaces: tuple[str, ...], speed: TimeScale | None,
        duration: str | None, repetitions: int | None, namespace_prefix: str | None,
        node_groups: str | None, reset_node_groups: bool | None, startup_delay: str | None,
        seed: int | None, timers: tuple[str, ...], hold: bool | None, max_hold: str | None,
        hpa: str | None, wait: bool, timeout: float | None,
        kubeconfig: Path | None,
        env_name: str | None) -> None:
    """Create a Simulation (one replay of a trace, maybe repeated); --wait follows it."""
    flags = sim_manifest.RunFlags(
        name=name, trace=trace, tracer=tracer, start=start, end=end, namespaces=namespaces,
        speed=speed, duration=duration, repetitions=repetitions,
        namespace_prefix=namespace_prefix, node_groups=node_groups,
        reset_node_groups=reset_node_groups, startup_delay=startup_delay, seed=seed,
        timers=timers, hold=hold, max_hold=max_hold, hpa=hpa)
    if file is not None:
        given = [option for option, value in vars(flags).items()
                 if option != "name" and value not in (None, ())]
        if given:
            raise click.UsageError(f"--file excludes --{given[0].replace('_', '-')}: put "
                                   "the setting in the file")
        simulation = sim_manifest.from_file(file, name=name)
    else:
        simulation = sim_manifest.from_flags(flags)
    name = simulation["metadata"]["name"]
    if not wait:
        create_simulation(simulation, wait=False, timeout=timeout, kubeconfig=kubeconfig,
                          env_name=env_name)
        click.echo(f"follow it with: skctl status {name}")
        return
    create_simulation(simulation, wait=True, timeout=timeout, kubeconfig=kubeconfig,
                      env_name=env_name)
    click.echo(f"report: skctl report {name}")


def create_simulation(simulation: dict[str, Any], *, wait: bool, timeout: float | None,
                      kubeconfig: Path | None, env_name: str | None,
                      details: Console | None = None) -> dict[str, Any]:
    """Create ``simulation``; with ``wait``, follow it to its end and show its runs.

    What ``skctl run`` does, for other commands that replay a trace (``skctl check
    --trace``): the resource as created, or its final state, refused unless Finished. The
    final details go to ``details`` (stdout by default); a command whose stdout is a report
    (Markdown, JSON) passes a stderr console.
    """
    name = simulation["metadata"]["name"]
    for warning in sim_manifest.timer_warnings(simulation):
        notes.print(f"[yellow]WARNING:[/] {warning}", highlight=False)

    async def action(kube: KubeClient) -> dict[str, Any]:
        await sim_client.create(kube, simulation)
        notes.print(f"[green]✓[/] simulation {name!r} created")
        if not wait:
            return simulation
        return await sim_progress.follow(kube, name, console=notes, timeout=timeout)

    final = with_cluster(kubeconfig, env_name, action)
    if not wait:
        return final
    sim_tables.print_details(final, console=details)
    if state_of(final) != State.FINISHED:
        raise SimulationFailedError(f"simulation {name!r} ended "
                               f"{state_of(final)}: "
                               f"{(final.get('status') or {}).get('message') or 'no message'}",
                               hint=f"kubectl describe sim {name} shows its Events")
    return final


@click.command("status")
@click.argument("name", required=False)
@kubeconfig_option
@env_option
@json_option
def status_command(name: str | None, kubeconfig: Path | None, env_name: str | None,
                   as_json: bool) -> None:
    """Every simulation, or one (with its runs) when NAME is given."""
    if name is None:
        items = with_cluster(kubeconfig, env_name, sim_client.list_all)
        if as_json:
            click.echo(json.dumps(items, indent=2))
        else:
            sim_tables.print_listing(items)
        return

    async def one(kube: KubeClient) -> dict[str, Any]:
        return await sim_client.get(kube, name)

    simulation = with_cluster(kubeconfig, env_name, one)
    if as_json:
        click.echo(json.dumps(simulation, indent=2))
    else:
        sim_tables.print_details(simulation)


def _pausing_command(*, paused: bool, help_text: str) -> click.Command:
    """``skctl pause`` or ``skctl resume``: the same patch of ``spec.pausedTime``, either way."""
    verb = "pause" if paused else "resume"

    @click.command(verb, help=help_text)
    @click.argument("name")
    @kubeconfig_option
    @env_option
    def command(name: str, kubeconfig: Path | None, env_name: str | None) -> None:
        async def action(kube: KubeClient) -> dict[str, Any]:
            return await sim_client.set_paused(kube, name, paused=paused)

        with_cluster(kubeconfig, env_name, action)
        notes.print(f"[green]✓[/] simulation {name!r} {'pausing' if paused else 'resuming'} "
                    "(sk-ctrl carries it out; 'skctl status' shows when it did)")

    return command


pause_command = _pausing_command(
    paused=True, help_text="Pause simulation NAME: trace time stops until 'skctl resume'.")
resume_command = _pausing_command(
    paused=False, help_text="Resume simulation NAME where it was paused.")


@click.command("delete")
@click.argument("name")
@click.option("--no-wait", is_flag=True, help="Return without waiting for the cleanup.")
@kubeconfig_option
@env_option
def delete_command(name: str, no_wait: bool, kubeconfig: Path | None,
                   env_name: str | None) -> None:
    """Delete simulation NAME: its run is cancelled and its objects removed; results stay."""
    async def action(kube: KubeClient) -> bool:
        return await sim_client.delete(kube, name, wait=0 if no_wait else DELETE_WAIT)

    with notes.status(f"deleting {name} (sk-ctrl cancels the run and cleans up)"):
        gone = with_cluster(kubeconfig, env_name, action)
    if not gone:
        raise SimkubeError(f"simulation {name!r} is still there after {DELETE_WAIT:.0f}s",
                           hint="its finalizer waits for sk-ctrl: is sk-ctrl running?")
    notes.print(f"[green]✓[/] simulation {name!r} "
                f"{'deletion requested' if no_wait else 'deleted'}")


SIMULATION_COMMANDS = (run_command, status_command, pause_command, resume_command,
                       delete_command)
