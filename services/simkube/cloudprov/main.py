"""The ``sk-cloudprov`` command: flags in, a running externalgrpc cloud provider out.

Every bad flag, config or cluster problem found at start ends the process with ``error: ...``
and the error's exit code, before the port opens, so a broken deployment never serves.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from simkube.cloudprov import config as cloud_config
from simkube.cloudprov.app import CloudProvider
from simkube.core.cli import run_command
from simkube.core.errors import ConfigError
from simkube.core.kubeapi import CONFIG_MAPS, ApiError, KubeClient
from simkube.core.logs import configure_logging
from simkube.core.serving import TlsConfig, parse_address

CONFIGMAP_PREFIX = "configmap:"


def tls_config(*, cert: Path | None, key: Path | None, client_ca: Path | None) -> TlsConfig | None:
    if cert is None and key is None:
        if client_ca is not None:
            raise ConfigError("--tls-client-ca needs --tls-cert and --tls-key")
        return None
    if cert is None or key is None:
        raise ConfigError("--tls-cert and --tls-key go together")
    return TlsConfig(cert=cert, key=key, client_ca=client_ca)


def configmap_reference(reference: str) -> tuple[str, str] | None:
    """``configmap:NAMESPACE/NAME`` as (namespace, name); None for a file path."""
    if not reference.startswith(CONFIGMAP_PREFIX):
        return None
    namespace, _, name = reference.removeprefix(CONFIGMAP_PREFIX).partition("/")
    if not namespace or not name or "/" in name:
        raise ConfigError(f"--config {reference!r}: write configmap:NAMESPACE/NAME")
    return namespace, name


async def read_configmap(api: KubeClient, *, namespace: str, name: str) -> cloud_config.CloudConfig:
    try:
        found = await api.request("GET", CONFIG_MAPS.path(namespace=namespace, name=name))
    except ApiError as exc:
        raise ConfigError(f"cannot read ConfigMap {namespace}/{name}: {exc}") from None
    return cloud_config.from_configmap(found.get("data") or {}, namespace=namespace, name=name)


async def serve(*, config_ref: str, kubeconfig: Path | None, listen: str,
                metrics_listen: str | None, tls: TlsConfig | None) -> None:
    # A config file is checked before anything touches the cluster.
    configmap = configmap_reference(config_ref)
    if configmap is None:
        config = await asyncio.to_thread(cloud_config.load_file, Path(config_ref))
    # Requests wait on a semaphore of 64 (a burst of Node creations never opens more) rather
    # than inside aiohttp's pool of 100.
    api = await KubeClient.connect(kubeconfig=kubeconfig, pool_size=100, concurrency=64,
                                   timeout=30.0, connect_timeout=30.0)
    try:
        if configmap is not None:
            config = await read_configmap(api, namespace=configmap[0], name=configmap[1])
        provider = CloudProvider(config=config, api=api, listen=listen,
                                 metrics_listen=metrics_listen, tls=tls)
        await provider.start()
        try:
            await provider.service.run_until_signalled()
        finally:
            await provider.stop()
    finally:
        await api.close()


PATH = click.Path(path_type=Path, dir_okay=False)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--config", "config_ref", required=True, metavar="FILE|configmap:NS/NAME",
              help="Node groups: a YAML file, or a ConfigMap's config.yaml key.")
@click.option("--kubeconfig", type=PATH, envvar="KUBECONFIG",
              help="Cluster to manage (default: $KUBECONFIG, else the in-cluster account).")
@click.option("--listen", default="127.0.0.1:8086", show_default=True,
              help="gRPC address, HOST:PORT.")
@click.option("--metrics-listen", default=None, help="Prometheus /metrics address, HOST:PORT.")
@click.option("--tls-cert", type=PATH, help="Serving certificate (PEM); enables TLS.")
@click.option("--tls-key", type=PATH, help="Private key of --tls-cert (PEM).")
@click.option("--tls-client-ca", type=PATH,
              help="CA that client certificates must chain to; enables mutual TLS.")
@click.option("--log-level", default="info", show_default=True,
              type=click.Choice(["debug", "info", "warning", "error"]))
@click.option("--log-json/--log-console", default=None,
              help="Log format (default: JSON unless stderr is a terminal).")
def command(*, config_ref: str, kubeconfig: Path | None, listen: str, metrics_listen: str | None,
            tls_cert: Path | None, tls_key: Path | None, tls_client_ca: Path | None,
            log_level: str, log_json: bool | None) -> None:
    """Serve Cluster Autoscaler's externalgrpc CloudProvider over KWOK node groups."""
    configure_logging(level=log_level, json_output=log_json)
    parse_address(listen, flag="--listen")
    if metrics_listen:
        parse_address(metrics_listen, flag="--metrics-listen")
    tls = tls_config(cert=tls_cert, key=tls_key, client_ca=tls_client_ca)
    asyncio.run(serve(config_ref=config_ref, kubeconfig=kubeconfig, listen=listen,
                      metrics_listen=metrics_listen, tls=tls))


def main() -> None:
    """Run sk-cloudprov; user errors print a message and exit non-zero, never a traceback."""
    run_command(command)
