"""The Simulation that ``skctl run`` creates, from flags or a file, checked before it is sent.

A Simulation that sk-ctrl or sk-driver would refuse is refused here first, with the one
parsing of a Simulation's spec (``simkube.simulation.spec.parse_spec``, which applies every
rule, sk-driver's speed ceiling included), so a typo never leaves a Failed object in the
cluster.
``skctl run`` also resolves what only the caller's machine can: a relative ``--trace`` path
becomes absolute (sk-driver of a local environment runs on this host), and a trace file that
is missing or not a trace is reported before anything is created.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from simkube.core import simtime
from simkube.core.errors import ConfigError
from simkube.core.simtime import TimeScale
from simkube.simulation import names
from simkube.simulation.names import DNS_LABEL
from simkube.simulation.spec import SpecError, parse_spec
from simkube.simulation.timers import timer_sections
from simkube.trace import PREFIX_BYTES, TraceFormatError, detect_format

URL_SCHEMES = re.compile(r"^(https?|file)://")
NAME_STEM_LENGTH = 40


@dataclass(frozen=True, kw_only=True)
class RunFlags:
    """What ``skctl run`` was given on the command line (None: not given)."""

    name: str | None = None
    trace: str | None = None
    tracer: str | None = None
    start: str | None = None
    end: str | None = None
    namespaces: tuple[str, ...] = ()
    speed: TimeScale | None = None  # parsed by the --speed option (core.cli.SPEED)
    duration: str | None = None
    repetitions: int | None = None
    namespace_prefix: str | None = None
    node_groups: str | None = None
    reset_node_groups: bool | None = None
    startup_delay: str | None = None
    seed: int | None = None
    timers: tuple[str, ...] = ()  # SECTION.NAME=VALUE each, trace time
    hold: bool | None = None  # spec.clock.holdForAutoscaler (--hold/--no-hold)
    max_hold: str | None = None  # spec.clock.maxHold, wall time
    hpa: str | None = None  # spec.hpa: active or removed (--hpa)


def default_name(trace: str, *, now: datetime.datetime | None = None) -> str:
    """``<trace stem>-<UTC time>``, cut and cleaned to a DNS label."""
    stem = Path(trace.rstrip("/")).name.split(".")[0].lower()
    stem = re.sub(r"[^a-z0-9-]+", "-", stem).strip("-")[:NAME_STEM_LENGTH] or "sim"
    stamp = (now or datetime.datetime.now(datetime.UTC)).strftime("%Y%m%d-%H%M%S")
    return f"{stem}-{stamp}"


def _trace_source(flags: RunFlags) -> dict[str, Any]:
    if flags.trace and flags.tracer:
        raise ConfigError("--trace and --tracer exclude each other: replay a file or a "
                          "tracer's window, not both")
    if flags.tracer:
        window: dict[str, Any] = {"address": flags.tracer}
        window.update({key: value for key, value in (("start", flags.start),
                                                     ("end", flags.end)) if value})
        if flags.namespaces:
            window["namespaces"] = list(flags.namespaces)
        return {"tracer": window}
    if flags.start or flags.end or flags.namespaces:
        raise ConfigError("--start, --end and --namespace select a window of --tracer")
    if not flags.trace:
        raise ConfigError("say what to replay: --trace FILE|URL, --tracer HOST:PORT or --file")
    if URL_SCHEMES.match(flags.trace):
        return {"url": flags.trace}
    return {"path": str(check_trace_file(Path(flags.trace)))}


def check_trace_file(path: Path) -> Path:
    """``path`` made absolute, once it is known to be a readable trace of a known format."""
    resolved = path.expanduser().resolve()
    if not resolved.is_file():
        raise ConfigError(f"trace file {path} does not exist")
    try:
        with resolved.open("rb") as file:
            detect_format(file.read(PREFIX_BYTES))
    except TraceFormatError as exc:
        raise ConfigError(f"{path} is not a trace: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read trace file {path}: {exc.strerror}") from None
    return resolved


def from_flags(flags: RunFlags) -> dict[str, Any]:
    """A whole Simulation object from command-line flags, checked like sk-ctrl checks it."""
    spec: dict[str, Any] = {"trace": _trace_source(flags)}
    optional = {"speed": flags.speed.speed if flags.speed else None,  # a float on the wire
                "duration": flags.duration,
                "repetitions": flags.repetitions, "namespacePrefix": flags.namespace_prefix,
                "hpa": flags.hpa}
    spec.update({key: value for key, value in optional.items() if value is not None})
    groups = {key: value for key, value in (("config", flags.node_groups),
                                            ("resetBeforeRun", flags.reset_node_groups))
              if value is not None}
    if groups:
        spec["nodeGroups"] = groups
    if flags.startup_delay:
        spec["podTiming"] = {"startupDelay": flags.startup_delay}
    if flags.seed is not None:
        spec["seed"] = flags.seed
    spec.update(timer_sections(flags.timers))
    clock = {key: value for key, value in (("holdForAutoscaler", flags.hold),
                                           ("maxHold", flags.max_hold)) if value is not None}
    if clock:
        spec["clock"] = clock
    name = flags.name or default_name(flags.trace or flags.tracer or "sim")
    return checked({"apiVersion": names.API_VERSION, "kind": names.KIND,
                    "metadata": {"name": name}, "spec": spec})


def from_file(path: Path, *, name: str | None) -> dict[str, Any]:
    """The Simulation in a YAML file (``--name`` renames it), checked like sk-ctrl checks it."""
    try:
        loaded = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not YAML: {exc}") from None
    if not isinstance(loaded, dict):
        raise ConfigError(f"{path} must hold one Simulation object")
    if (loaded.get("apiVersion"), loaded.get("kind")) != (names.API_VERSION, names.KIND):
        raise ConfigError(f"{path} holds apiVersion {loaded.get('apiVersion')!r} kind "
                          f"{loaded.get('kind')!r}; expected {names.API_VERSION} "
                          f"{names.KIND}")
    metadata = loaded.setdefault("metadata", {})
    if not isinstance(metadata, dict):
        raise ConfigError(f"{path}: metadata must be a mapping")
    if name:
        metadata["name"] = name
    if not metadata.get("name"):
        raise ConfigError(f"{path} has no metadata.name; add one or pass --name")
    return checked(loaded)


def timer_warnings(simulation: dict[str, Any]) -> list[str]:
    """Floors that stretch one of the Simulation's timers more than twice at its speed."""
    spec = parse_spec(simulation)
    scaled = simtime.plan(scale=spec.scale, settings=spec.timers)
    return [timer.describe() for timer in scaled.distorted()]


def checked(simulation: dict[str, Any]) -> dict[str, Any]:
    name = str(simulation["metadata"]["name"])
    if not DNS_LABEL.fullmatch(name) or len(name) > names.MAX_LABEL:
        raise ConfigError(f"simulation name {name!r} must be a DNS label of at most "
                          f"{names.MAX_LABEL} characters (lowercase letters, digits, '-')")
    try:
        parse_spec(simulation)
    except SpecError as exc:
        raise ConfigError(f"simulation {name!r} cannot run: {exc.message}") from None
    return simulation
