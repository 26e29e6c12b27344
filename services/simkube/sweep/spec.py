"""The sweep file (``version: 1``): a base run, the axes that vary, and how points are chosen.

Read whole and checked whole before anything is created: every mistake is one
``ConfigError`` naming the file and the field (``sweep.yaml: base.speed ...``), because a
sweep that fails at its twentieth point over a typo has cost hours. Paths in the file are
relative to the file, so a sweep directory can be moved or shared as it is. The file's
SHA-256 identifies the sweep a results directory belongs to (``manifest.py``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simkube.cloudprov.config import load_file
from simkube.core.config import load_yaml_mapping
from simkube.core.durations import parse_duration
from simkube.core.errors import ConfigError
from simkube.core.simtime import TimeScale, parse_speed
from simkube.env.autoscalers.kinds import AutoscalerKind
from simkube.simulation.timers import (
    MAX_SEED,
    SECTIONS,
    TimerSpecError,
    timer_settings,
    timer_spec,
)
from simkube.sweep.axes import Axis, duration_text, parse_axis
from simkube.sweep.sampling import Sampling, parse_sampling

VERSION = 1
TOP_KEYS = ("version", "name", "base", "axes", "sampling")
BASE_KEYS = ("trace", "speed", "duration", "seed", "repetitions", "nodeGroups", "autoscaler",
             "timers")
MAX_NAME = 40  # simulations are <name>-p<index>: a DNS label with room for the index
NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DEFAULT_SEED = 1  # the same for every point, so points differ only by their settings
MAX_REPETITIONS = 100


@dataclass(frozen=True, kw_only=True)
class Base:
    trace: Path
    scale: TimeScale
    duration: str | None  # trace time to replay; None: the whole trace
    seed: int
    repetitions: int
    node_groups: Path | None  # None: the environment's shipped node groups
    autoscaler: AutoscalerKind
    timers: Mapping[str, str]  # timer key → trace-time value


@dataclass(frozen=True, kw_only=True)
class Sweep:
    name: str
    path: Path
    digest: str  # SHA-256 of the file's bytes
    base: Base
    axes: tuple[Axis, ...]
    sampling: Sampling


def load_sweep(path: Path) -> Sweep:
    """The sweep in ``path``, checked in full."""
    data = load_yaml_mapping(path, what="sweep file")
    try:
        return _parse(data, path=path.resolve())
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc.message}", hint=exc.hint) from None


def _parse(data: Mapping[str, Any], *, path: Path) -> Sweep:
    unknown = sorted(str(key) for key in data if key not in TOP_KEYS)
    if unknown:
        raise ConfigError(f"unknown field(s) {', '.join(unknown)}; allowed: {', '.join(TOP_KEYS)}")
    if data.get("version") != VERSION:
        raise ConfigError(f"version {data.get('version')!r} is not {VERSION}, the one this "
                          "skctl reads (add 'version: 1')")
    name = data.get("name", re.sub(r"[^a-z0-9-]+", "-", path.stem.lower()).strip("-"))
    if not isinstance(name, str) or not NAME.match(name) or len(name) > MAX_NAME:
        raise ConfigError(f"name {name!r} must be lowercase letters, digits and '-', at most "
                          f"{MAX_NAME} characters")
    if not isinstance(data.get("base"), dict):
        raise ConfigError("base must be a mapping with at least a trace")
    raw_axes = data.get("axes")
    if not isinstance(raw_axes, list) or not raw_axes:
        raise ConfigError("axes must list at least one axis")
    axes = tuple(parse_axis(raw, where=f"axes[{index}]") for index, raw in enumerate(raw_axes))
    for index, axis in enumerate(axes):
        if axis.target in (other.target for other in axes[:index]):
            raise ConfigError(f"axes[{index}] varies {axis.target} again; merge its values "
                              "into the first axis")
    return Sweep(name=name, path=path, digest=hashlib.sha256(path.read_bytes()).hexdigest(),
                 base=_base(data["base"], folder=path.parent), axes=axes,
                 sampling=parse_sampling(data.get("sampling")))


def _base(raw: Mapping[str, Any], *, folder: Path) -> Base:
    unknown = sorted(str(key) for key in raw if key not in BASE_KEYS)
    if unknown:
        raise ConfigError(f"base: unknown field(s) {', '.join(unknown)}; "
                          f"allowed: {', '.join(BASE_KEYS)}")
    trace = _file(raw.get("trace"), folder=folder, field="base.trace")
    if trace is None:
        raise ConfigError("base.trace is required: the trace file every point replays")
    node_groups = _file(raw.get("nodeGroups"), folder=folder, field="base.nodeGroups")
    if node_groups is not None:
        load_file(node_groups)  # its own errors name the group and field
    duration = raw.get("duration")
    if duration is not None:
        duration = duration_text(duration)
        parse_duration(duration, field="base.duration")
    autoscaler = raw.get("autoscaler", AutoscalerKind.CLUSTER_AUTOSCALER.value)
    if autoscaler not in [kind.value for kind in AutoscalerKind]:
        raise ConfigError(f"base.autoscaler {autoscaler!r} is not one of "
                          f"{', '.join(kind.value for kind in AutoscalerKind)}")
    return Base(trace=trace, scale=parse_speed(raw.get("speed", 1), field="base.speed"),
                duration=duration, seed=_whole(raw.get("seed", DEFAULT_SEED), "base.seed",
                                               low=0, high=MAX_SEED),
                repetitions=_whole(raw.get("repetitions", 1), "base.repetitions", low=1,
                                   high=MAX_REPETITIONS),
                node_groups=node_groups, autoscaler=AutoscalerKind(autoscaler),
                timers=_timers(raw.get("timers") or {}))


def _file(raw: Any, *, folder: Path, field: str) -> Path | None:
    if raw is None:
        return None
    if not isinstance(raw, str) or not raw:
        raise ConfigError(f"{field} must be a path (relative to the sweep file)")
    path = (folder / raw).resolve()
    if not path.is_file():
        raise ConfigError(f"{field} {raw} does not exist (looked for {path})")
    return path


def _whole(raw: Any, field: str, *, low: int, high: int) -> int:
    if type(raw) is not int or not low <= raw <= high:
        raise ConfigError(f"{field} {raw!r} must be a whole number from {low} to {high}")
    return raw


def _timers(raw: Any) -> dict[str, str]:
    if not isinstance(raw, dict):
        raise ConfigError("base.timers must map timer keys (clusterAutoscaler.scan-interval) "
                          "to trace-time durations")
    timers = {str(key): duration_text(value) for key, value in raw.items()}
    for key in timers:
        if key.partition(".")[0] not in SECTIONS:
            raise ConfigError(f"base.timers: {key!r} is not SECTION.NAME with SECTION one of "
                              f"{', '.join(SECTIONS)}")
    try:
        timer_settings(timer_spec(timers))
    except TimerSpecError as exc:
        raise ConfigError(f"base.timers: {exc.message}") from None
    return timers
