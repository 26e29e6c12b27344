"""``sk-driver serve``: the Driver gRPC service until SIGTERM or SIGINT.

Shutdown cancels running simulations first (their watchers receive the final state), then
stops the server; ``--grace`` bounds both.
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import click

from simkube.core.errors import SimkubeError
from simkube.core.kubeapi import KubeClient
from simkube.core.logs import get_logger
from simkube.core.serving import Service, TlsConfig
from simkube.driver import roots
from simkube.driver.registry import Registry, SimulationCollector
from simkube.driver.service import DriverServicer, registrar

log = get_logger(__name__)


@click.command()
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
def serve_command(*, listen: str, metrics_listen: str | None, kubeconfig: Path | None,
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
    except SimkubeError as exc:  # ApiError too: the cluster may come up later, retried per start
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
