"""``sk-ctrl serve``: the Simulation controller until SIGTERM or SIGINT.

Shutdown stops watching and following but leaves the driver's runs going: a restarted
sk-ctrl lists the Simulations and re-attaches to the run in progress.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from pathlib import Path

import click

from simkube.core.errors import ConfigError
from simkube.core.kubeapi import ApiError, KubeClient
from simkube.core.logs import configure_logging, get_logger
from simkube.core.serving import Service, parse_address
from simkube.ctrl.autoscaler_loops import AutoscalerMetrics
from simkube.ctrl.context import Deps
from simkube.ctrl.crd import ensure_crd
from simkube.ctrl.driving import DriverClient
from simkube.ctrl.leasing import SimulationLease
from simkube.ctrl.metrics import ControllerMetrics
from simkube.ctrl.names import DEFAULT_LEASE_NAMESPACE
from simkube.ctrl.reconciling import Reconciler
from simkube.ctrl.timing import AutoscalerDeployment, LocalEnvironment, TimerTarget
from simkube.ctrl.watching import watch_simulations

log = get_logger(__name__)


@click.command()
@click.option("--driver", "driver_address", required=True, metavar="HOST:PORT",
              help="sk-driver's gRPC address.")
@click.option("--driver-tls", is_flag=True, help="Talk TLS to sk-driver.")
@click.option("--driver-ca", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="CA that signed sk-driver's certificate (with --driver-tls).")
@click.option("--kubeconfig", type=click.Path(dir_okay=False, path_type=Path),
              envvar="KUBECONFIG", help="Simulated cluster (default: $KUBECONFIG, else the "
              "pod's service account).")
@click.option("--results-dir", required=True,
              type=click.Path(file_okay=False, path_type=Path),
              help="Results go to DIR/<simulation>/run-<n>/.")
@click.option("--node-groups", default=None, metavar="FILE|configmap:NS/NAME",
              help="sk-cloudprov's node groups (prices, reset before runs).")
@click.option("--lease-namespace", default=DEFAULT_LEASE_NAMESPACE, show_default=True)
@click.option("--listen", default="127.0.0.1:50054", show_default=True,
              help="gRPC health and reflection address.")
@click.option("--metrics-listen", default=None, help="Prometheus /metrics address.")
@click.option("--log-json/--log-console", default=None,
              help="Log format (default: console on a terminal, JSON otherwise).")
@click.option("--env", "env_name", default=None, metavar="NAME",
              help="Each run's timers go to this local environment's cluster-autoscaler, "
                   "kube-scheduler and kube-controller-manager (restarted through its "
                   "supervisor; docs/simulated-time.md).")
@click.option("--autoscaler-deployment", default=None, metavar="NAMESPACE/NAME",
              help="Each run's timers go to Cluster Autoscaler's Deployment (its args "
                   "patched, the rollout awaited), in a cluster.")
@click.option("--autoscaler-metrics-url", default=None, metavar="URL",
              help="Cluster Autoscaler's Prometheus /metrics: runs hold their clock until CA "
                   "has finished a loop that saw a newly unschedulable pod (without it they "
                   "never hold; docs/simulated-time.md).")
@click.option("--retry-budget", type=float, default=60.0, show_default=True,
              help="Seconds an unreachable sk-driver is retried before a simulation fails.")
def serve_command(*, driver_address: str, driver_tls: bool, driver_ca: Path | None,
                  kubeconfig: Path | None, results_dir: Path, node_groups: str | None,
                  lease_namespace: str, listen: str, metrics_listen: str | None,
                  log_json: bool | None, retry_budget: float, env_name: str | None,
                  autoscaler_deployment: str | None,
                  autoscaler_metrics_url: str | None) -> None:
    """Run the Simulation controller until SIGTERM or SIGINT."""
    if autoscaler_metrics_url is not None and not autoscaler_metrics_url.startswith(
            ("http://", "https://")):
        raise click.UsageError(f"--autoscaler-metrics-url {autoscaler_metrics_url!r} is not "
                               "an http(s):// URL")
    if env_name and autoscaler_deployment:
        raise click.UsageError("give --env or --autoscaler-deployment, not both")
    if autoscaler_deployment is not None:
        namespace, _, name = autoscaler_deployment.partition("/")
        if not namespace or not name or "/" in name:
            raise click.UsageError(f"--autoscaler-deployment {autoscaler_deployment!r}: "
                                   "write NAMESPACE/NAME")
    if log_json is not None:
        level = (click.get_current_context().find_root().obj or {}).get("log_level", "info")
        configure_logging(level=level, json_output=log_json)
    parse_address(driver_address, flag="--driver")
    if driver_ca is not None and not driver_tls:
        raise click.UsageError("--driver-ca needs --driver-tls")
    if retry_budget <= 0:
        raise click.UsageError("--retry-budget must be positive")
    try:
        results_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"--results-dir {results_dir} cannot be created: "
                          f"{exc.strerror}") from None
    asyncio.run(_serve(driver_address=driver_address, driver_tls=driver_tls,
                       driver_ca=driver_ca, kubeconfig=kubeconfig,
                       results_dir=results_dir.resolve(), node_groups=node_groups,
                       lease_namespace=lease_namespace, listen=listen,
                       metrics_listen=metrics_listen, retry_budget=retry_budget,
                       env_name=env_name, autoscaler_deployment=autoscaler_deployment,
                       autoscaler_metrics_url=autoscaler_metrics_url))


async def _serve(*, driver_address: str, driver_tls: bool, driver_ca: Path | None,
                 kubeconfig: Path | None, results_dir: Path, node_groups: str | None,
                 lease_namespace: str, listen: str, metrics_listen: str | None,
                 retry_budget: float, env_name: str | None,
                 autoscaler_deployment: str | None,
                 autoscaler_metrics_url: str | None) -> None:
    kube = await KubeClient.connect(kubeconfig=kubeconfig)
    loops = (AutoscalerMetrics(url=autoscaler_metrics_url)
             if autoscaler_metrics_url else None)
    target: TimerTarget | None = None
    if env_name:
        target = LocalEnvironment(env_name)
    elif autoscaler_deployment:
        namespace, _, name = autoscaler_deployment.partition("/")
        target = AutoscalerDeployment(kube=kube, namespace=namespace, name=name)
    driver = DriverClient(address=driver_address, tls=driver_tls, ca_file=driver_ca)
    service = Service(name="sk-ctrl", listen=listen, metrics_listen=metrics_listen, grace=2)
    metrics = ControllerMetrics(service.metrics.registry)
    try:
        await ensure_crd(kube)
        lease = SimulationLease(kube=kube, namespace=lease_namespace)
        await lease.ensure()
        reconciler = Reconciler(deps=Deps(
            kube=kube, driver=driver, lease=lease, results_dir=results_dir,
            node_groups=node_groups, metrics=metrics, retry_budget=retry_budget,
            timer_target=target, loops=loops))
        metrics.watch_simulations(lambda: reconciler.cache)
        await service.start(lambda _server: [])
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        tasks = [asyncio.create_task(watch_simulations(kube, reconciler)),
                 asyncio.create_task(reconciler.run())]
        log.info("sk-ctrl ready", driver=driver_address, results=str(results_dir))
        await stop.wait()
        log.info("shutting down; runs in sk-driver keep going")
        await service.health.enter_graceful_shutdown()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await reconciler.shutdown()
        await service.stop()
    except ApiError as exc:
        raise ConfigError(f"cannot reach the simulated cluster: {exc}") from None
    finally:
        with contextlib.suppress(Exception):
            await driver.close()
        if loops is not None:
            await loops.close()
        await kube.close()
