"""``sk-driver``: ``serve`` runs the Driver gRPC service, ``replay`` replays one trace and exits.

``replay`` is for a developer's terminal and for Kubernetes Jobs: it validates its flags and
the whole trace before touching the cluster, shows progress, and exits 0 when the replay
succeeded, 1 when it failed (or its cleanup did), 130 when interrupted (Ctrl-C cancels the
simulation and cleans up; a second Ctrl-C exits without waiting). Errors print one message,
never a traceback.
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
from simkube.core.logs import configure_logging, get_logger
from simkube.core.serving import Service, TlsConfig
from simkube.driver import roots, sources
from simkube.driver.kubeapi import ApiError, KubeClient
from simkube.driver.options import SimulationOptions, build_options
from simkube.driver.progress import SimulationState
from simkube.driver.registry import Registry, SimulationCollector, launch
from simkube.driver.scanning import scan_trace
from simkube.driver.service import DriverServicer, registrar
from simkube.driver.simulation import Simulation
from simkube.driver.terminal import ProgressDisplay, summary

log = get_logger(__name__)
CLI_FIELDS = {"name": "--name", "speed": "--speed", "duration": "--duration",
              "prefix": "--prefix", "node_selector": "--node-selector",
              "startup_delay": "--startup-delay", "startup_jitter": "--startup-jitter",
              "lifetime_jitter": "--lifetime-jitter", "max_concurrency": "--concurrency"}
EXIT_FAILED = 1
EXIT_INTERRUPTED = 130


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--log-level", default="warning", show_default=True,
              type=click.Choice(["debug", "info", "warning", "error"]),
              help="Verbosity of the structured log on stderr.")
@click.option("--log-json/--log-console", default=None,
              help="Log format (default: console on a terminal, JSON otherwise).")
def cli(log_level: str, log_json: bool | None) -> None:
    """Replay traces into a simulated Kubernetes cluster."""
    configure_logging(level=log_level, json_output=log_json)


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


@cli.command()
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
def replay(*, trace: str, kubeconfig: Path | None, speed: float | None, duration: str | None,
           prefix: str | None, name: str | None, cleanup: bool, node_selector: tuple[str, ...],
           startup_delay: str | None, startup_jitter: str | None, lifetime_jitter: str | None,
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


@cli.command()
@click.option("--listen", default="0.0.0.0:50052", show_default=True, help="gRPC address.")
@click.option("--metrics-listen", default=None, help="Prometheus /metrics address.")
@click.option("--kubeconfig", type=click.Path(dir_okay=False, path_type=Path),
              envvar="KUBECONFIG", help="Simulated cluster (default: $KUBECONFIG, else the "
              "pod's service account).")
@click.option("--tls-cert", type=click.Path(path_type=Path), default=None)
@click.option("--tls-key", type=click.Path(path_type=Path), default=None)
@click.option("--tls-client-ca", type=click.Path(path_type=Path), default=None,
              help="Require client certificates signed by this CA (mTLS).")
@click.option("--grace", type=float, default=30.0, show_default=True,
              help="Seconds to cancel running simulations and finish RPCs at shutdown.")
def serve(*, listen: str, metrics_listen: str | None, kubeconfig: Path | None,
          tls_cert: Path | None, tls_key: Path | None, tls_client_ca: Path | None,
          grace: float) -> None:
    """Run the Driver gRPC service until SIGTERM or SIGINT."""
    if (tls_cert is None) != (tls_key is None):
        raise click.UsageError("--tls-cert and --tls-key go together")
    tls = (TlsConfig(cert=tls_cert, key=tls_key, client_ca=tls_client_ca)
           if tls_cert is not None and tls_key is not None else None)
    if tls is None and tls_client_ca is not None:
        raise click.UsageError("--tls-client-ca needs --tls-cert and --tls-key")
    asyncio.run(_serve(listen=listen, metrics_listen=metrics_listen, kubeconfig=kubeconfig,
                       tls=tls, grace=grace))


async def _serve(*, listen: str, metrics_listen: str | None, kubeconfig: Path | None,
                 tls: TlsConfig | None, grace: float) -> None:
    kube = await KubeClient.connect(kubeconfig=kubeconfig)
    try:
        await roots.ensure_crd(kube)
    except (ApiError, SimkubeError) as exc:  # the cluster may come up later: retried per start
        log.warning("SimulationRoot CRD not ensured at start", error=str(exc))
    registry = Registry(kube=kube)
    service = Service(name="sk-driver", listen=listen, metrics_listen=metrics_listen, tls=tls,
                      grace=grace)
    service.metrics.registry.register(SimulationCollector(registry))
    try:
        await service.start(registrar(DriverServicer(registry)))
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        log.info("shutting down", grace=grace)
        # Simulations first, so their watchers receive the final state before the server
        # stops taking calls.
        await service.health.enter_graceful_shutdown()
        await registry.shutdown(timeout=grace)
        await service.stop()
    finally:
        await kube.close()


def main() -> None:
    """Run sk-driver; user errors print a message and exit non-zero, never a traceback."""
    try:
        result = cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except SimkubeError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    sys.exit(result if isinstance(result, int) else 0)
