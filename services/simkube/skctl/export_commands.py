"""``skctl export`` and ``skctl tracer status``: pull traces from, and look into, a tracer.

Every flag is checked before connecting (times, namespaces, selectors, kinds), with the same
parsers the tracer uses, so a typo is reported at once and no request is sent. The export
shows a progress bar and writes its output atomically; an output named ``.sktrace`` or
``.json`` is converted to SimKube's format after the native trace arrived.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import click
from google.protobuf.json_format import MessageToDict
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from simkube.core.errors import ConfigError
from simkube.gen.simkube.tracer.v1 import tracer_pb2
from simkube.trace import TraceFormat, TraceWriter, format_for_path, open_trace
from simkube.tracer.client import ClientTls, export_to_file, get_status
from simkube.tracer.export_filters import ExportFilters
from simkube.tracer.status import WatchState
from simkube.tracer.units import parse_time_ms

console = Console(stderr=True)


def tracer_options(command: Any) -> Any:
    """--tracer and the TLS flags, shared by every command that talks to a tracer."""
    for option in reversed([
        click.option("--tracer", "address", required=True, metavar="HOST:PORT",
                     help="Address of the sk-tracer gRPC service."),
        click.option("--tls-ca", type=click.Path(path_type=Path),
                     help="Use TLS and verify the tracer with this CA (PEM)."),
        click.option("--tls-cert", type=click.Path(path_type=Path),
                     help="Client certificate for a tracer that requires mTLS."),
        click.option("--tls-key", type=click.Path(path_type=Path), help="Client key (PEM).")]):
        command = option(command)
    return command


def _tls(ca: Path | None, cert: Path | None, key: Path | None) -> ClientTls | None:
    if (cert is None) != (key is None):
        raise ConfigError("--tls-cert and --tls-key go together")
    if ca is None:
        if cert is not None:
            raise ConfigError("--tls-cert needs --tls-ca")
        return None
    tls = ClientTls(ca=ca, cert=cert, key=key)
    tls.credentials()  # read the files now: a typo fails before connecting
    return tls


@click.command("export")
@tracer_options
@click.option("--start", help="Window start: RFC 3339, -15m style or now (default: oldest).")
@click.option("--end", help="Window end, exclusive (default: now).")
@click.option("--namespace", "namespaces", multiple=True, help="Only this namespace (repeat).")
@click.option("--exclude-namespace", "excluded", multiple=True, help="Leave out a namespace.")
@click.option("--selector", "-l", "selectors", multiple=True,
              help="Label selector objects must match (repeat: all must match).")
@click.option("--kind", "kinds", multiple=True, help="Only this kind, e.g. apps/v1.Deployment.")
@click.option("--exclude-kind", "excluded_kinds", multiple=True, help="Leave out a kind.")
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False), required=True,
              help="Trace file to write (.sktrace/.json: SimKube format, else native).")
def export_command(address: str, tls_ca: Path | None,  # noqa: PLR0917
                   tls_cert: Path | None, tls_key: Path | None, start: str | None,
                   end: str | None, namespaces: tuple[str, ...], excluded: tuple[str, ...],
                   selectors: tuple[str, ...], kinds: tuple[str, ...],
                   excluded_kinds: tuple[str, ...], output: Path) -> None:
    """Export a time window of a tracer's recording as a trace file."""
    tls = _tls(tls_ca, tls_cert, tls_key)
    now_ms = int(time.time() * 1000)
    start_ms = parse_time_ms(start, what="--start", now_ms=now_ms) if start else 0
    end_ms = parse_time_ms(end, what="--end", now_ms=now_ms) if end else now_ms
    if end_ms <= start_ms:
        raise ConfigError(f"--end ({end}) must be after --start ({start})")
    try:
        ExportFilters.parse(include_namespaces=list(namespaces),
                            exclude_namespaces=list(excluded), label_selectors=list(selectors),
                            include_kinds=list(kinds), exclude_kinds=list(excluded_kinds))
    except ConfigError as exc:
        raise ConfigError(exc.message.replace("kind filter", "--kind")) from None
    if not output.parent.is_dir():
        raise ConfigError(f"-o {output}: directory {output.parent} does not exist")
    request = tracer_pb2.ExportRequest(
        start_ts_ms=start_ms, end_ts_ms=end_ms,
        filters=tracer_pb2.ExportFilters(
            include_namespaces=namespaces, exclude_namespaces=excluded,
            label_selectors=selectors, include_kinds=kinds, exclude_kinds=excluded_kinds))
    trace_format = format_for_path(output)
    native = output if trace_format is TraceFormat.NATIVE else output.with_name(
        f".{output.name}.native")
    started = time.monotonic()
    with Progress(TextColumn("exporting"), BarColumn(), TextColumn("{task.fields[events]}"),
                  TextColumn("{task.fields[size]}"), TimeElapsedColumn(), console=console,
                  transient=True) as bar:
        task = bar.add_task("export", total=None, events="", size="")

        def progress(written: int, total: int, size: int) -> None:
            bar.update(task, completed=written, total=max(total, written) or None,
                       events=f"{written}/{total} events", size=f"{size / 2**20:.1f} MiB")

        size = asyncio.run(export_to_file(native, address=address, request=request,
                                          progress=progress, tls=tls))
    if native != output:
        try:
            source = open_trace(native)
            with TraceWriter(output, header=source.header, trace_format=trace_format) as out:
                out.write_state(source.initial_state())
                for event in source.events():
                    out.write_event(event)
                for lifecycle in source.lifecycles():
                    out.write_lifecycle(lifecycle)
            dropped = len(source.recorded_usage())  # SimKube formats have no place for it
        finally:
            native.unlink(missing_ok=True)
        size = output.stat().st_size
        if dropped:
            console.print(f"[yellow]![/] recorded usage of {dropped} workloads not written: "
                          "SimKube traces cannot hold it (export to a .trace file to keep it)")
    console.print(f"[green]✓[/] wrote {output} ({size} bytes) in "
                  f"{time.monotonic() - started:.1f}s")


@click.group("tracer")
def tracer_group() -> None:
    """Look into a running sk-tracer."""


@tracer_group.command("status")
@tracer_options
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
def status_command(address: str, tls_ca: Path | None, tls_cert: Path | None,
                   tls_key: Path | None, as_json: bool) -> None:
    """What each kind's watch is doing and what the store holds."""
    reply = asyncio.run(get_status(address, tls=_tls(tls_ca, tls_cert, tls_key)))
    if as_json:
        data: dict[str, Any] = MessageToDict(reply, preserving_proto_field_name=True,
                                             always_print_fields_with_no_presence=True)
        for kind in data.get("kinds", []):
            kind["state"] = kind["state"].removeprefix("WATCH_STATE_")
        click.echo(json.dumps(data, indent=2))
        return
    table = Table(title=f"sk-tracer at {address}")
    for column in ("kind", "state", "resourceVersion", "events", "resyncs", "last error"):
        table.add_column(column)
    for kind in reply.kinds:
        table.add_row(kind.kind, WatchState(kind.state).name, kind.resource_version,
                      str(kind.events_stored), str(kind.resyncs), kind.last_error[:80])
    Console().print(table)
    click.echo(f"store: {reply.store_events} events, {reply.store_bytes} bytes in "
               f"{reply.segments} segment(s), {reply.live_objects} live objects; "
               f"oldest {_when(reply.oldest_ts_ms)}, newest {_when(reply.newest_ts_ms)}")


def _when(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ms / 1000)) if ms else "-"
