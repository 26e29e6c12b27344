"""``sk-driver replay``: one trace into one cluster, with progress, then exit.

For a developer's terminal and for Kubernetes Jobs: flags and the whole trace are validated
before the cluster is touched; progress shows as a bar on a terminal and as lines elsewhere;
the exit code says how it ended (0 succeeded, 1 failed or its cleanup did, 130 interrupted).
The first Ctrl-C (or SIGTERM) cancels the simulation and cleans up; a second one exits at
once, leaving the deletion to the garbage collector.
"""

from __future__ import annotations

import asyncio
import re
import secrets
import signal
import sys
from pathlib import Path

import click

from simkube.core.errors import SimkubeError
from simkube.core.kubeapi import ApiError, KubeClient
from simkube.driver import sources
from simkube.driver.options import SimulationOptions, build_options
from simkube.driver.progress import SimulationState
from simkube.driver.registry import launch
from simkube.driver.scanning import scan_trace
from simkube.driver.simulation import Simulation
from simkube.driver.terminal import ProgressDisplay, summary

CLI_FIELDS = {"name": "--name", "speed": "--speed", "duration": "--duration",
              "prefix": "--prefix", "node_selector": "--node-selector",
              "startup_delay": "--startup-delay", "startup_jitter": "--startup-jitter",
              "lifetime_jitter": "--lifetime-jitter", "max_concurrency": "--concurrency"}
EXIT_FAILED = 1
EXIT_INTERRUPTED = 130


def default_name(trace: str) -> str:
    stem = re.sub(r"[^a-z0-9-]+", "-", Path(trace).stem.lower()).strip("-")[:50] or "sim"
    return f"{stem}-{secrets.token_hex(3)}"


def _node_selector(values: tuple[str, ...]) -> dict[str, str] | None:
    if not values:
        return None
    selector = {}
    for value in values:
        key, sep, label = value.partition("=")
        if not sep:
            raise click.BadParameter(f"{value!r} is not KEY=VALUE", param_hint="--node-selector")
        selector[key] = label
    return selector


@click.command()
@click.argument("trace")
@click.option("--kubeconfig", type=click.Path(dir_okay=False, path_type=Path),
              envvar="KUBECONFIG", help="Cluster to replay into (default: $KUBECONFIG, else "
              "the pod's service account).")
@click.option("--speed", type=float, default=None, help="Trace seconds per second [1].")
@click.option("--duration", default=None, help="Trace time to replay from its start "
              "(90s, 15m, 2h); events at or after it are skipped.")
@click.option("--prefix", default=None, help="Virtual namespace prefix [virtual].")
@click.option("--name", default=None, help="Simulation (and root) name [from the file name].")
@click.option("--cleanup", is_flag=True, help="Delete everything the replay created at the end.")
@click.option("--node-selector", multiple=True, metavar="KEY=VALUE",
              help="Pods' node selector (repeatable) [type=kwok].")
@click.option("--startup-delay", default=None, help="KWOK waits this long before a pod runs.")
@click.option("--startup-jitter", default=None, help="Plus up to this much, at random.")
@click.option("--lifetime-jitter", default=None,
              help="Up to this much added to recorded pod lifetimes, at random.")
@click.option("--concurrency", type=int, default=None, help="Requests in flight at most [64].")
def replay_command(*, trace: str, kubeconfig: Path | None, speed: float | None,
                   duration: str | None, prefix: str | None, name: str | None, cleanup: bool,
                   node_selector: tuple[str, ...], startup_delay: str | None,
                   startup_jitter: str | None, lifetime_jitter: str | None,
                   concurrency: int | None) -> None:
    """Replay TRACE (a file or URL) into the cluster, then exit."""
    options = build_options(
        name=name or default_name(trace), speed=speed, duration=duration, prefix=prefix,
        node_selector=_node_selector(node_selector), startup_delay=startup_delay,
        startup_jitter=startup_jitter, lifetime_jitter=lifetime_jitter, cleanup=cleanup,
        max_concurrency=concurrency, field_names=CLI_FIELDS)
    sys.exit(asyncio.run(_replay(trace, kubeconfig=kubeconfig, options=options)))


async def _replay(trace: str, *, kubeconfig: Path | None, options: SimulationOptions) -> int:
    source = await sources.from_location(trace, field="TRACE")
    scan = await asyncio.to_thread(scan_trace, source, duration_ms=options.duration_ms)
    kube = await KubeClient.connect(kubeconfig=kubeconfig)
    try:
        simulation = await launch(kube=kube, options=options, source=source, scan=scan)
        return await _follow(simulation)
    except ApiError as exc:
        raise SimkubeError(f"the cluster's API server refused: {exc}") from None
    finally:
        await kube.close()


async def _follow(simulation: Simulation) -> int:
    loop = asyncio.get_running_loop()
    interrupts = 0
    current = asyncio.current_task()
    cancelling: list[asyncio.Future[object]] = []

    def interrupted() -> None:
        nonlocal interrupts
        interrupts += 1
        if interrupts == 1:
            click.echo("\ncancelling: stopping the replay and cleaning up "
                       "(Ctrl-C again to exit without waiting)", err=True)
            cancelling.append(asyncio.ensure_future(simulation.cancel(wait=False)))
        elif current is not None:
            current.cancel()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, interrupted)
    try:
        with ProgressDisplay(sys.stderr) as display:
            async for snapshot in simulation.changes(interval=0.2):
                display.update(snapshot)
    except asyncio.CancelledError:
        click.echo(f"exited without waiting; the root {simulation.name} is being deleted",
                   err=True)
        return EXIT_INTERRUPTED
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    final = await simulation.wait()
    click.echo(summary(final))
    if final.state is SimulationState.CANCELLED:
        return EXIT_INTERRUPTED
    if final.state is not SimulationState.SUCCEEDED:
        return EXIT_FAILED
    return EXIT_FAILED if simulation.options.cleanup and not final.cleaned_up else 0
