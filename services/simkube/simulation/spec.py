"""A Simulation's spec, parsed and checked into a typed value before anything is created.

The CRD's schema already refuses most mistakes, but a Simulation may come from an older CRD
or a cluster where the schema was installed by hand, and some checks (RFC 3339 windows, the
duration grammar the driver speaks) are clearer here. Every problem becomes a ``SpecError``
whose message names the field, which sk-ctrl copies into ``status.message`` and an Event.

The spec is parsed once, under every rule a later stage would apply — sk-driver's speed
ceiling included (``core.simtime.parse_speed``) — so skctl can refuse a Simulation before it
is created instead of leaving a Failed one behind, and sk-ctrl hands sk-driver only what it
will take. The speed is a ``TimeScale`` from here on; it becomes a float again only on the
wire (the driver's request, the run's ConfigMap).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from simkube.core.durations import DurationError, parse_duration
from simkube.core.simtime import SpeedError, TimerSettings, TimeScale, parse_speed
from simkube.simulation.errors import SpecError
from simkube.simulation.names import DNS_LABEL
from simkube.simulation.source import TracerWindow, mapping, parse_source, parse_time
from simkube.simulation.timers import TimerSpecError, seed_of, timer_settings

# What a spec's readers need: the parsed value, its parser and its error (which lives in
# ``errors`` so the trace source can raise it too), and the window type a spec may carry.
__all__ = ["MAX_PREFIX", "MAX_REPETITIONS", "HpaMode", "SimulationSpec", "SpecError",
           "TracerWindow", "parse_spec"]

MAX_PREFIX = 40  # room for "-<namespace>" within a 63-character namespace name
MAX_REPETITIONS = 100
DEFAULT_MAX_HOLD_S = 2.0  # spec.clock.maxHold: wall seconds one hold may last at most
MAX_MAX_HOLD_S = 60.0  # a longer bound would let a stuck autoscaler stall a run


class HpaMode(Enum):
    """``spec.hpa``: what the trace's HorizontalPodAutoscalers do in the replay."""

    ACTIVE = "active"  # created as recorded: the real HPA controller decides replicas
    REMOVED = "removed"  # left out: every workload keeps its recorded replicas


@dataclass(frozen=True, kw_only=True)
class SimulationSpec:
    trace_url: str | None  # spec.trace.path or spec.trace.url, as sk-driver reads it
    tracer: TracerWindow | None
    namespace_prefix: str
    scale: TimeScale  # spec.speed
    duration: str
    repetitions: int
    startup_delay: str
    startup_jitter: str
    lifetime_jitter: str
    node_groups: str | None  # None: sk-ctrl's --node-groups
    reset_node_groups: bool
    paused: bool
    seed: int
    timers: TimerSettings
    # spec.clock: hold the trace clock while the autoscaler reacts (ctrl/holding.py), each
    # hold at most max_hold_s of wall time.
    hold_for_autoscaler: bool = True
    max_hold_s: float = DEFAULT_MAX_HOLD_S
    hpa: HpaMode = HpaMode.ACTIVE


def _duration(value: Any, *, field: str, allow_zero: bool = True) -> str:
    if value in (None, ""):
        return ""
    try:
        parse_duration(str(value), field=field, allow_zero=allow_zero)
    except DurationError as exc:
        raise SpecError(exc.message) from None
    return str(value)


def _clock(spec: dict[str, Any]) -> tuple[bool, float]:
    """``spec.clock``: whether to hold for the autoscaler, and each hold's bound (wall s)."""
    clock = mapping(spec.get("clock"), field="spec.clock")
    hold = clock.get("holdForAutoscaler", True)
    if not isinstance(hold, bool):
        raise SpecError(f"spec.clock.holdForAutoscaler {hold!r} must be true or false")
    text = _duration(clock.get("maxHold"), field="spec.clock.maxHold", allow_zero=False)
    max_hold_s = parse_duration(text, field="spec.clock.maxHold") / 1000 if text else (
        DEFAULT_MAX_HOLD_S)
    if max_hold_s > MAX_MAX_HOLD_S:
        raise SpecError(f"spec.clock.maxHold {text!r} is more than {MAX_MAX_HOLD_S:g}s: a "
                        "stuck autoscaler could stall the run that long at every hold")
    return hold, max_hold_s


def _hpa(spec: dict[str, Any]) -> HpaMode:
    value = spec.get("hpa") or HpaMode.ACTIVE.value
    try:
        return HpaMode(value)
    except ValueError:
        raise SpecError(f"spec.hpa {value!r} must be active (the trace's HPAs act) or removed "
                        "(replicas as recorded)") from None


def parse_spec(simulation: dict[str, Any]) -> SimulationSpec:
    """The spec of ``simulation`` (a whole object) checked in full; ``SpecError`` otherwise."""
    spec = mapping(simulation.get("spec"), field="spec")
    name = str((simulation.get("metadata") or {}).get("name") or "")
    trace_url, tracer = parse_source(mapping(spec.get("trace"), field="spec.trace"))
    prefix = str(spec.get("namespacePrefix") or "virtual")
    if not DNS_LABEL.fullmatch(prefix) or len(prefix) > MAX_PREFIX:
        raise SpecError(f"spec.namespacePrefix {prefix!r} must be a DNS label of at most "
                        f"{MAX_PREFIX} characters (lowercase letters, digits, '-')")
    try:
        scale = parse_speed(spec.get("speed", 1), field="spec.speed")
    except SpeedError as exc:
        raise SpecError(exc.message) from None
    repetitions = spec.get("repetitions", 1)
    if (not isinstance(repetitions, int) or isinstance(repetitions, bool)
            or not 1 <= repetitions <= MAX_REPETITIONS):
        raise SpecError(f"spec.repetitions {repetitions!r} must be a whole number from 1 "
                        f"to {MAX_REPETITIONS}")
    timing = mapping(spec.get("podTiming"), field="spec.podTiming")
    groups = mapping(spec.get("nodeGroups"), field="spec.nodeGroups")
    paused = spec.get("pausedTime")
    try:
        seed, timers = seed_of(spec, name=name), timer_settings(spec)
    except TimerSpecError as exc:
        raise SpecError(exc.message) from None
    if paused not in (None, ""):
        parse_time(paused, field="spec.pausedTime")
    hold, max_hold_s = _clock(spec)
    return SimulationSpec(
        trace_url=trace_url, tracer=tracer, namespace_prefix=prefix, scale=scale,
        duration=_duration(spec.get("duration"), field="spec.duration", allow_zero=False),
        repetitions=repetitions,
        startup_delay=_duration(timing.get("startupDelay"), field="spec.podTiming.startupDelay"),
        startup_jitter=_duration(timing.get("startupJitter"),
                                 field="spec.podTiming.startupJitter"),
        lifetime_jitter=_duration(timing.get("lifetimeJitter"),
                                  field="spec.podTiming.lifetimeJitter"),
        node_groups=str(groups["config"]) if groups.get("config") else None,
        reset_node_groups=bool(groups.get("resetBeforeRun", True)),
        paused=paused not in (None, ""), seed=seed, timers=timers,
        hold_for_autoscaler=hold, max_hold_s=max_hold_s, hpa=_hpa(spec))
