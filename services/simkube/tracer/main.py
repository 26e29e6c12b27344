"""``sk-tracer``: the command that runs the tracer, with every flag checked before start-up.

Flags override the config file (retention, the usage period), and every bad value, a missing
file or a store already in use ends with a one-line message and a non-zero exit code, never a
traceback.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import click

from simkube.core.cli import run_command
from simkube.core.errors import ConfigError
from simkube.core.logs import configure_logging, get_logger
from simkube.core.serving import TlsConfig
from simkube.tracer.config import Retention, load_config
from simkube.tracer.runtime import Tracer, TracerOptions
from simkube.tracer.units import parse_duration, parse_size

log = get_logger(__name__)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--kubeconfig", type=click.Path(path_type=Path),
              help="Cluster to record (default: in-cluster, else ~/.kube/config).")
@click.option("--config", "config_path", type=click.Path(path_type=Path),
              help="Tracer config (SimKube's trackedObjects schema and extensions).")
@click.option("--listen", default="127.0.0.1:50051", show_default=True,
              help="gRPC listen address HOST:PORT.")
@click.option("--store", "store_dir", type=click.Path(path_type=Path), required=True,
              help="Directory of the on-disk store (created if missing).")
@click.option("--metrics-listen", help="Prometheus metrics HTTP address HOST:PORT.")
@click.option("--retention-age", help="Drop data older than this (e.g. 7d; 0 keeps all).")
@click.option("--retention-bytes", help="Keep the store below this size (e.g. 10GiB).")
@click.option("--usage-period", metavar="DURATION",
              help="Sample metrics.k8s.io PodMetrics this often (1s to 1h; 0: record no "
                   "usage) [default: the config's usage.period, else 15s].")
@click.option("--segment-bytes", default="64MiB", show_default=True,
              help="Roll to a new segment after this many bytes.")
@click.option("--segment-age", default="1h", show_default=True,
              help="Roll to a new segment after this long.")
@click.option("--tls-cert", type=click.Path(path_type=Path), help="Server certificate (PEM).")
@click.option("--tls-key", type=click.Path(path_type=Path), help="Server key (PEM).")
@click.option("--tls-client-ca", type=click.Path(path_type=Path),
              help="Require client certificates signed by this CA (mTLS).")
@click.option("--log-level", default="info", show_default=True,
              type=click.Choice(["debug", "info", "warning", "error"]))
@click.option("--log-json/--log-console", default=None,
              help="Log format (default: console on a terminal, JSON otherwise).")
def cli(  # noqa: PLR0917  # click passes every option as a parameter
        kubeconfig: Path | None, config_path: Path | None, listen: str, store_dir: Path,
        metrics_listen: str | None, retention_age: str | None, retention_bytes: str | None,
        usage_period: str | None, segment_bytes: str, segment_age: str,
        tls_cert: Path | None, tls_key: Path | None, tls_client_ca: Path | None,
        log_level: str, log_json: bool | None) -> None:
    """Record a live cluster into a durable, bounded store; export traces over gRPC."""
    configure_logging(level=log_level, json_output=log_json)
    config = load_config(config_path)
    if kubeconfig is not None and not kubeconfig.is_file():
        raise ConfigError(f"--kubeconfig {kubeconfig} does not exist")
    retention = Retention(
        max_age_seconds=(parse_duration(retention_age, what="--retention-age")
                         if retention_age is not None else config.retention.max_age_seconds),
        max_bytes=(parse_size(retention_bytes, what="--retention-bytes")
                   if retention_bytes is not None else config.retention.max_bytes))
    usage = config.usage if usage_period is None else replace(
        config.usage, period_seconds=parse_duration(usage_period, what="--usage-period"))
    if (tls_cert is None) != (tls_key is None):
        raise ConfigError("--tls-cert and --tls-key go together")
    if tls_client_ca is not None and tls_cert is None:
        raise ConfigError("--tls-client-ca needs --tls-cert and --tls-key")
    tls = (TlsConfig(cert=tls_cert, key=tls_key, client_ca=tls_client_ca)
           if tls_cert is not None and tls_key is not None else None)
    if tls is not None:
        tls.credentials()  # read the files now: a typo fails before anything starts
    options = TracerOptions(
        config=replace(config, retention=retention, usage=usage), store=store_dir,
        kubeconfig=kubeconfig, listen=listen, metrics_listen=metrics_listen, tls=tls,
        segment_bytes=max(1, parse_size(segment_bytes, what="--segment-bytes")),
        segment_seconds=max(1.0, parse_duration(segment_age, what="--segment-age")))
    asyncio.run(_run(options))


async def _run(options: TracerOptions) -> None:
    tracer = Tracer(options)
    await tracer.start()
    log.info("recording", kinds=[kind.kind.key for kind in options.config.kinds],
             store=str(options.store), port=tracer.service.port)
    await tracer.run_until_signalled()


def main() -> None:
    """Run sk-tracer; user errors print a message and exit non-zero, never a traceback."""
    run_command(cli, prefix="sk-tracer: ")
