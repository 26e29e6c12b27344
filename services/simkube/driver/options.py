"""What a caller may choose about a simulation, checked once, in one place.

The CLI and the gRPC service both turn raw user input into ``SimulationOptions`` through
``build_options``, so a bad value gets the same specific error from either front end and
nothing downstream re-validates. Defaults put pods on KWOK's fake nodes only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from simkube.core.durations import parse_duration
from simkube.core.fake_nodes import NODE_TYPE_LABEL, NODE_TYPE_VALUE
from simkube.core.simtime import REAL_TIME, SpeedError, TimeScale, parse_speed
from simkube.driver.errors import DriverInputError
from simkube.driver.names import FAKE_NODE_KEY

DEFAULT_PREFIX = "virtual"
DEFAULT_CONCURRENCY = 64
MAX_CONCURRENCY = 1024
DEFAULT_NODE_SELECTOR: Mapping[str, str] = {NODE_TYPE_LABEL: NODE_TYPE_VALUE}
DEFAULT_TOLERATIONS: tuple[Mapping[str, str], ...] = (
    {"key": FAKE_NODE_KEY, "operator": "Exists", "effect": "NoSchedule"},)
TOLERATION_OPERATORS = ("Exists", "Equal")
TOLERATION_EFFECTS = ("", "NoSchedule", "PreferNoSchedule", "NoExecute")
# A virtual namespace "<prefix>-<ns>" must still be a DNS label (63 characters).
MAX_PREFIX = 40

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_LABEL_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")


@dataclass(frozen=True, kw_only=True)
class Placement:
    """Merged into every pod template so the simulation's pods land on fake nodes only."""

    node_selector: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_NODE_SELECTOR))
    tolerations: tuple[Mapping[str, str], ...] = DEFAULT_TOLERATIONS


@dataclass(frozen=True, kw_only=True)
class PodTiming:
    """KWOK stage parameters the driver writes onto pods (see ``lifecycles``)."""

    startup_delay_ms: int = 0
    startup_jitter_ms: int = 0
    lifetime_jitter_ms: int = 0
    scale_up_gated: bool = False  # pods carry CA's pod-scale-up-delay until sk-ctrl lifts it


@dataclass(frozen=True, kw_only=True)
class SimulationOptions:
    name: str
    scale: TimeScale = REAL_TIME  # the request's speed
    duration_ms: int | None = None  # trace time from the trace's start; None: whole trace
    prefix: str = DEFAULT_PREFIX
    placement: Placement = field(default_factory=Placement)
    pod_timing: PodTiming = field(default_factory=PodTiming)
    cleanup: bool = False
    max_concurrency: int = DEFAULT_CONCURRENCY
    remove_hpas: bool = False  # replay without the trace's HorizontalPodAutoscalers
    hold_pod_work: bool = False  # hold briefly before applying work that makes pods
    retry_deadline_s: float = 30.0  # how long transient API errors are retried per object


def check_name(name: str, *, field: str = "name") -> str:
    """A simulation name: a DNS label, since it names the root and labels every pod."""
    if not name:
        raise DriverInputError(f"{field} is empty; give the simulation a name", field=field)
    if len(name) > 63 or not _DNS_LABEL.fullmatch(name):
        raise DriverInputError(
            f"{field} {name!r} is not a valid simulation name: use at most 63 lowercase "
            "letters, digits and '-', starting and ending with a letter or digit", field=field)
    return name


def check_speed(speed: float, *, field: str = "speed") -> TimeScale:
    """The one speed rule (``core.simtime``), its error as the driver's, naming ``field``."""
    try:
        return parse_speed(speed, field=field)
    except SpeedError as exc:
        raise DriverInputError(exc.message, field=field, hint=exc.hint) from None


def check_prefix(prefix: str, *, field: str = "prefix") -> str:
    if len(prefix) > MAX_PREFIX or not _DNS_LABEL.fullmatch(prefix):
        raise DriverInputError(
            f"{field} {prefix!r} is not a valid namespace prefix: use at most {MAX_PREFIX} "
            "lowercase letters, digits and '-', starting and ending with a letter or digit",
            field=field)
    return prefix


def check_node_selector(selector: Mapping[str, str], *, field: str) -> dict[str, str]:
    for key, value in selector.items():
        name = key.rsplit("/", 1)[-1]
        if not key or len(name) > 63 or not _LABEL_NAME.fullmatch(name):
            raise DriverInputError(f"{field} key {key!r} is not a valid label key", field=field)
        if len(value) > 63 or not _LABEL_VALUE.fullmatch(value):
            raise DriverInputError(f"{field} value {value!r} of {key!r} is not a valid label "
                                   "value", field=field)
    return dict(selector)


def check_toleration(toleration: Mapping[str, str], *, field: str) -> dict[str, str]:
    operator = toleration.get("operator") or "Equal"
    effect = toleration.get("effect", "")
    if operator not in TOLERATION_OPERATORS:
        raise DriverInputError(f"{field} operator {operator!r} must be Exists or Equal",
                               field=field)
    if effect not in TOLERATION_EFFECTS:
        raise DriverInputError(f"{field} effect {effect!r} must be one of NoSchedule, "
                               "PreferNoSchedule, NoExecute or empty", field=field)
    if operator == "Exists" and toleration.get("value"):
        raise DriverInputError(f"{field}: a toleration with operator Exists has no value",
                               field=field)
    if not toleration.get("key") and operator != "Exists":
        raise DriverInputError(f"{field}: a toleration without a key needs operator Exists",
                               field=field)
    result = {"key": toleration.get("key", ""), "operator": operator}
    if toleration.get("value"):
        result["value"] = toleration["value"]
    if effect:
        result["effect"] = effect
    return result


def _optional_duration(text: str | None, *, field: str) -> int:
    return parse_duration(text, field=field, allow_zero=True) if text else 0


def build_options(*, name: str, speed: float | None = None, duration: str | None = None,
                  prefix: str | None = None, node_selector: Mapping[str, str] | None = None,
                  tolerations: Sequence[Mapping[str, str]] | None = None,
                  startup_delay: str | None = None, startup_jitter: str | None = None,
                  lifetime_jitter: str | None = None, cleanup: bool = False,
                  max_concurrency: int | None = None, remove_hpas: bool = False,
                  gate_scale_up: bool = False, hold_pod_work: bool = False,
                  field_names: Mapping[str, str] | None = None) -> SimulationOptions:
    """Options from raw input; ``field_names`` renames fields in errors (``speed`` → ``--speed``).

    ``None`` (and "" for strings) means "the default"; the gRPC service maps proto3's zero
    values to ``None`` before calling.
    """
    names = dict(field_names or {})

    def named(key: str) -> str:
        return names.get(key, key)

    concurrency = DEFAULT_CONCURRENCY if max_concurrency is None else max_concurrency
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        raise DriverInputError(f"{named('max_concurrency')} {concurrency} must be between 1 "
                               f"and {MAX_CONCURRENCY}", field=named("max_concurrency"))
    placement = Placement(
        node_selector=(DEFAULT_NODE_SELECTOR if node_selector is None else
                       check_node_selector(node_selector, field=named("node_selector"))),
        tolerations=(DEFAULT_TOLERATIONS if tolerations is None else tuple(
            check_toleration(t, field=f"{named('tolerations')}[{index}]")
            for index, t in enumerate(tolerations))))
    timing = PodTiming(
        startup_delay_ms=_optional_duration(startup_delay, field=named("startup_delay")),
        startup_jitter_ms=_optional_duration(startup_jitter, field=named("startup_jitter")),
        lifetime_jitter_ms=_optional_duration(lifetime_jitter, field=named("lifetime_jitter")),
        scale_up_gated=gate_scale_up)
    return SimulationOptions(
        name=check_name(name, field=named("name")),
        scale=REAL_TIME if speed is None else check_speed(speed, field=named("speed")),
        duration_ms=parse_duration(duration, field=named("duration")) if duration else None,
        prefix=check_prefix(prefix, field=named("prefix")) if prefix else DEFAULT_PREFIX,
        placement=placement, pod_timing=timing, cleanup=cleanup,
        max_concurrency=concurrency, remove_hpas=remove_hpas, hold_pod_work=hold_pod_work)
