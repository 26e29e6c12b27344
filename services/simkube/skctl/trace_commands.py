"""``skctl trace``: inspect, validate, fix, edit and convert traces.

Thin by design: flags are parsed here, the work happens in ``simkube.trace``, results are
rendered with rich (or as JSON with ``--json``). Output files are written atomically, so a
failed command never leaves a partial trace behind. ``validate`` exits 0 when clean, 1 with
warnings only and 2 with errors; an unreadable trace exits 5.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from simkube.trace import TraceFormat, open_trace
from simkube.trace.tools.convert import convert, write_converted
from simkube.trace.tools.edit import apply_edits
from simkube.trace.tools.edit_file import load_steps
from simkube.trace.tools.edit_options import EditOptions, steps_from_options
from simkube.trace.tools.findings import Finding, FindingCode, FixChoice, Severity, exit_status
from simkube.trace.tools.fixes import apply_fixes, choose_fixes
from simkube.trace.tools.info import TraceSummary, summarise
from simkube.trace.tools.validate import validate

console = Console()
FORMATS = [trace_format.value for trace_format in TraceFormat]
in_path = click.argument("source", type=click.Path(path_type=Path, dir_okay=False))
out_path = click.argument("target", type=click.Path(path_type=Path, dir_okay=False))
to_option = click.option(
    "--to", "to_format", type=click.Choice(FORMATS),
    help="Output format (default: .sktrace → simkube-v2, .json → simkube-v2-json, else native).")
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead.")


def _format(value: str | None) -> TraceFormat | None:
    return None if value is None else TraceFormat(value)


@click.group("trace")
def trace_group() -> None:
    """Inspect, validate, fix, edit and convert traces (native or SimKube v2)."""


@trace_group.command("info")
@in_path
@json_option
def info_command(source: Path, as_json: bool) -> None:
    """Summarise a trace: time span, events, objects by kind, namespaces, lifecycles."""
    summary = summarise(open_trace(source))
    if as_json:
        click.echo(json.dumps(summary.to_json()))
        return
    console.print(_summary_table(source, summary))


def _summary_table(source: Path, summary: TraceSummary) -> Table:
    table = Table(title=escape(str(source)), show_header=False)
    table.add_column(style="bold")
    table.add_column()
    span = ("-" if summary.start_ts_ms is None or summary.end_ts_ms is None
            else f"{(summary.end_ts_ms - summary.start_ts_ms) / 1000:.1f} s")
    rows: list[tuple[str, Any]] = [
        ("format", f"{summary.format} (version {summary.version})"),
        ("bytes", f"{summary.bytes:,}"), ("time span", span), ("events", summary.events),
        ("applied", summary.applied), ("deleted", summary.deleted),
        ("namespaces", ", ".join(summary.namespaces) or "-"),
        ("pod lifecycles", f"{summary.lifecycles} runs of {summary.lifecycle_owners} owners"),
        ("usage", _usage_line(summary))]
    for kind, count in summary.applied_by_kind.items():
        rows.append((f"  applied {kind}", count))
    for kind, count in summary.deleted_by_kind.items():
        rows.append((f"  deleted {kind}", count))
    for name, value in rows:
        table.add_row(escape(name), escape(str(value)))
    return table


def _usage_line(summary: TraceSummary) -> str:
    usage = summary.usage
    if not usage.workloads:
        return "- (SimKube traces carry none)" if summary.format == "simkube-v2" else "-"
    periods = "/".join(f"{period / 1000:g}" for period in usage.periods_ms) or "?"
    span = ("" if usage.first_ms is None or usage.last_ms is None
            else f", {usage.first_ms / 1000:.1f}-{usage.last_ms / 1000:.1f} s into the trace")
    return (f"{usage.samples} samples of {usage.workloads} workloads, every {periods} s{span}")


@trace_group.command("validate")
@in_path
@json_option
@click.pass_context
def validate_command(ctx: click.Context, source: Path, as_json: bool) -> None:
    """Find what would break or distort a replay (exit 0 clean, 1 warnings, 2 errors)."""
    findings = validate(open_trace(source))
    if as_json:
        click.echo(json.dumps({"findings": [finding.to_json() for finding in findings],
                               "exit_status": exit_status(findings)}))
    elif findings:
        _print_findings(findings)
    else:
        console.print(f"[green]✓[/] {source}: no problems found")
    ctx.exit(exit_status(findings))


def _print_findings(findings: list[Finding]) -> None:
    # A list, not a table: paths and messages are long and terminals are narrow.
    for finding in findings:
        colour = "red" if finding.severity is Severity.ERROR else "yellow"
        console.print(f"[{colour}]{finding.severity.value:7}[/] [bold]{finding.code.value}[/]"
                      f"  {escape(finding.object)}", highlight=False)
        fixes = ", ".join(fix.value for fix in finding.fix_choices) or "none"
        console.print(f"         {escape(finding.path)}\n         {escape(finding.message)}\n"
                      f"         [dim]fixes: {fixes}[/]", highlight=False)
    errors = sum(1 for finding in findings if finding.severity is Severity.ERROR)
    console.print(f"{_count(len(findings), 'finding')}: {_count(errors, 'error')}, "
                  f"{_count(len(findings) - errors, 'warning')}")


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _parse_fix(_ctx: click.Context, _param: click.Parameter,
               values: tuple[str, ...]) -> dict[FindingCode, FixChoice]:
    chosen = {}
    for value in values:
        code, sep, choice = value.partition("=")
        try:
            chosen[FindingCode(code)] = FixChoice(choice)
        except ValueError:
            if not sep:
                raise click.BadParameter(f"{value!r} is not CODE=CHOICE") from None
            raise click.BadParameter(
                f"{value!r}: codes are {', '.join(c.value for c in FindingCode)}; choices "
                f"are {', '.join(f.value for f in FixChoice)}") from None
    return chosen


@trace_group.command("fix")
@in_path
@out_path
@click.option("--fix", "requested", multiple=True, callback=_parse_fix, metavar="CODE=CHOICE",
              help="Fix every finding of CODE with CHOICE (repeatable), e.g. "
              "missing-configmap=drop-reference.")
@click.option("--auto", is_flag=True, help="Apply each remaining finding's safe default fix.")
@to_option
def fix_command(source: Path, target: Path, requested: dict[FindingCode, FixChoice],
                auto: bool, to_format: str | None) -> None:
    """Write SOURCE to TARGET with the chosen fixes applied."""
    if not requested and not auto:
        raise click.UsageError("choose fixes with --fix CODE=CHOICE, or --auto")
    trace = open_trace(source)
    findings = validate(trace)
    choices = choose_fixes(findings, requested=requested, auto=auto)
    written = write_converted(apply_fixes(trace, findings, choices), trace, target,
                              trace_format=_format(to_format))
    for code, choice in choices.items():
        count = sum(1 for finding in findings if finding.code is code)
        console.print(f"[green]✓[/] {code.value}: {choice.value} ({_count(count, 'finding')})")
    unfixed = sorted({f.code.value for f in findings if f.code not in choices})
    if unfixed:
        console.print(f"[yellow]not fixed:[/] {', '.join(unfixed)}")
    console.print(f"wrote {written} to {target}")


@trace_group.command("edit")
@in_path
@out_path
@click.option("--steps", "steps_file", type=click.Path(path_type=Path, dir_okay=False),
              help="YAML file with a list of steps, applied first and in order.")
@click.option("--start", help="Window start: offset from the first event (5m) or ISO time.")
@click.option("--end", help="Window end (exclusive): offset or ISO time.")
@click.option("--duration", help="Window length, e.g. 10m (instead of --end).")
@click.option("--namespace", "namespaces", multiple=True, help="Keep only these namespaces.")
@click.option("--kind", "kinds", multiple=True,
              help="Keep only these kinds (Deployment or apps/v1.Deployment).")
@click.option("--selector", help="Keep only objects matching this label selector.")
@click.option("--drop-namespace", "drop_namespaces", multiple=True, help="Drop a namespace.")
@click.option("--drop-kind", "drop_kinds", multiple=True, help="Drop a kind.")
@click.option("--drop-selector", help="Drop objects matching this label selector.")
@click.option("--replicas-factor", type=click.FloatRange(min=0), help="Multiply replicas.")
@click.option("--replicas", type=click.IntRange(min=0), help="Set replicas.")
@click.option("--cpu-factor", type=click.FloatRange(min=0, min_open=True),
              help="Multiply CPU requests/limits.")
@click.option("--memory-factor", type=click.FloatRange(min=0, min_open=True),
              help="Multiply memory requests/limits.")
@click.option("--resources-in", type=click.Choice(["requests", "limits", "both"]),
              default="both", show_default=True, help="Which resources the factors scale.")
@click.option("--add-node-selector", multiple=True, metavar="KEY=VALUE",
              help="Add (or overwrite) a nodeSelector label in pod templates.")
@click.option("--remove-node-selector", multiple=True, metavar="KEY",
              help="Remove a nodeSelector label from pod templates.")
@click.option("--add-toleration", multiple=True, metavar="KEY[=VALUE][:EFFECT]",
              help="Add a toleration (Exists without a value) to pod templates.")
@click.option("--remove-toleration", multiple=True, metavar="KEY",
              help="Remove every toleration with this key from pod templates.")
@click.option("--time-stretch", "--time-scale", "time_stretch",
              type=click.FloatRange(min=0, min_open=True),
              help="Multiply time between events (0.5: twice as fast); --time-scale is its "
                   "former name.")
@click.option("--hpa", metavar="NAMESPACE/NAME",
              help="The HorizontalPodAutoscaler the --hpa-* flags change.")
@click.option("--hpa-cpu-target", type=click.IntRange(min=1), metavar="PERCENT",
              help="Set the HPA's CPU target utilization.")
@click.option("--hpa-min-replicas", type=click.IntRange(min=1), help="Set its minReplicas.")
@click.option("--hpa-max-replicas", type=click.IntRange(min=1), help="Set its maxReplicas.")
@click.option("--load-factor", type=click.FloatRange(min=0, min_open=True), metavar="K",
              help="Multiply the recorded usage (CPU and memory) of the target workloads.")
@click.option("--drop-usage", is_flag=True,
              help="Remove the recorded usage of the target workloads (all by default).")
@click.option("--target-namespace", "target_namespaces", multiple=True,
              help="Limit replica, resource, scheduling and load edits to these namespaces.")
@click.option("--target-kind", "target_kinds", multiple=True,
              help="Limit replica, resource and scheduling edits to these kinds.")
@click.option("--target-selector", help="Limit those edits to objects matching a selector.")
@to_option
def edit_command(source: Path, target: Path, steps_file: Path | None, to_format: str | None,
                 **options: Any) -> None:
    """Write SOURCE to TARGET with what-if edits applied (see docs/trace-tools.md)."""
    steps = load_steps(steps_file) if steps_file else []
    steps += steps_from_options(EditOptions(**options))
    if not steps:
        raise click.UsageError("no edits given; see skctl trace edit --help")
    trace = open_trace(source)
    written = write_converted(apply_edits(trace, steps), trace, target,
                              trace_format=_format(to_format))
    console.print(f"[green]✓[/] applied {_count(len(steps), 'step')}; wrote {written} to "
                  f"{target}")


@trace_group.command("convert")
@in_path
@out_path
@to_option
def convert_command(source: Path, target: Path, to_format: str | None) -> None:
    """Convert between native and SimKube v2 (.sktrace or JSON) formats."""
    written = convert(open_trace(source), target, trace_format=_format(to_format))
    console.print(f"[green]✓[/] wrote {written} to {target}")
