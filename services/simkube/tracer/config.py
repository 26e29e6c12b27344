"""sk-tracer's configuration: SimKube's ``trackedObjects`` schema plus what it lacks.

A SimKube tracer config works unchanged::

    trackedObjects:
      apps/v1.Deployment:
        podSpecTemplatePaths: [/spec/template]
        trackLifecycle: true

and may add, per kind or for every kind, namespace and label filters applied at the source,
plus how Secrets are recorded and how long the store keeps data. Any kind can be tracked,
including custom resources, cluster-scoped kinds and kinds without a pod template. Every
mistake is a ``ConfigError`` naming the file and the key, before anything starts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from simkube.core.config import load_yaml_mapping
from simkube.core.errors import ConfigError
from simkube.trace import DEFAULT_LIMITS, LabelSelector, TrackedKind, parse_selector
from simkube.tracer.kinds import KindKey, parse_kind_key
from simkube.tracer.units import parse_duration, parse_size

_NAMESPACE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_TOP_KEYS = {"trackedObjects", "namespaces", "excludeNamespaces", "secrets", "clusterName",
             "retention", "usage"}
_USAGE_KEYS = {"period", "maxSamples", "maxWorkloads"}
_KIND_KEYS = {"podSpecTemplatePaths", "podSpecTemplatePath", "trackLifecycle", "skipOwned",
              "namespaces", "excludeNamespaces", "labelSelector"}


class SecretPolicy(Enum):
    REDACT = "redact"  # record Secrets with their keys and empty values
    SKIP = "skip"  # do not record Secrets at all


@dataclass(frozen=True, slots=True, kw_only=True)
class KindConfig:
    kind: KindKey
    pod_template_paths: tuple[str, ...] = ()
    track_lifecycle: bool = False
    skip_owned: bool = False
    namespaces: frozenset[str] = frozenset()  # empty: every namespace
    exclude_namespaces: frozenset[str] = frozenset()
    label_selector: LabelSelector | None = None

    def in_scope(self, namespace: str) -> bool:
        """Whether an object in ``namespace`` ("" when cluster-scoped) is recorded."""
        if not namespace:
            return True
        if self.namespaces and namespace not in self.namespaces:
            return False
        return namespace not in self.exclude_namespaces

    def tracked(self) -> TrackedKind:
        return TrackedKind(kind_key=self.kind.key, pod_template_paths=self.pod_template_paths,
                           track_lifecycle=self.track_lifecycle, skip_owned=self.skip_owned)


@dataclass(frozen=True, slots=True, kw_only=True)
class Retention:
    max_age_seconds: float = 7 * 86400.0  # 0: keep forever
    max_bytes: int = 10 * 2**30  # 0: unbounded


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageSettings:
    """How usage is sampled: every ``period_seconds`` (0: never), within these bounds."""

    period_seconds: float = 15.0  # the HPA controller's default sync period
    max_samples: int = 5_760  # per workload: a day at 15 s
    max_series: int = 10_000

    def __post_init__(self) -> None:
        if self.period_seconds != 0 and not 1.0 <= self.period_seconds <= 3600.0:
            raise ConfigError(f"usage.period is {self.period_seconds:g} s; use 1s to 1h, or "
                              "0 to record no usage")
        if not 1 <= self.max_samples <= DEFAULT_LIMITS.max_usage_samples:
            raise ConfigError(f"usage.maxSamples must be 1 to "
                              f"{DEFAULT_LIMITS.max_usage_samples} (a trace's limit)")
        if not 1 <= self.max_series <= DEFAULT_LIMITS.max_usage_series:
            raise ConfigError(f"usage.maxWorkloads must be 1 to "
                              f"{DEFAULT_LIMITS.max_usage_series} (a trace's limit)")

    @property
    def enabled(self) -> bool:
        return self.period_seconds > 0

    @property
    def period_ms(self) -> int:
        return round(self.period_seconds * 1000)


@dataclass(frozen=True, slots=True, kw_only=True)
class TracerConfig:
    kinds: tuple[KindConfig, ...]
    secrets: SecretPolicy = SecretPolicy.REDACT
    cluster_name: str | None = None
    retention: Retention = field(default_factory=Retention)
    usage: UsageSettings = field(default_factory=UsageSettings)

    def kind(self, key: str) -> KindConfig | None:
        return next((kind for kind in self.kinds if kind.kind.key == key), None)


DEFAULT_TRACKED: dict[str, dict[str, Any]] = {
    "apps/v1.Deployment": {"podSpecTemplatePaths": ["/spec/template"]},
    "apps/v1.StatefulSet": {"podSpecTemplatePaths": ["/spec/template"]},
    "apps/v1.DaemonSet": {"podSpecTemplatePaths": ["/spec/template"]},
    "batch/v1.Job": {"podSpecTemplatePaths": ["/spec/template"], "trackLifecycle": True},
    "batch/v1.CronJob": {"podSpecTemplatePaths": ["/spec/jobTemplate/spec/template"],
                         "trackLifecycle": True},
    "v1.Pod": {"podSpecTemplatePaths": [""]},
    # Recorded like any other kind, so a replay can let the real HPA controller act on it.
    "autoscaling/v2.HorizontalPodAutoscaler": {},
}


def valid_namespace(name: object) -> bool:
    return isinstance(name, str) and len(name) <= 63 and bool(_NAMESPACE.match(name))


def load_config(path: Path | None) -> TracerConfig:
    """The config in ``path``, or the default one (common workload kinds) without a file."""
    if path is None:
        return parse_config({"trackedObjects": DEFAULT_TRACKED}, source="the default config")
    return parse_config(load_yaml_mapping(path, what="tracer config"), source=str(path))


def parse_config(raw: dict[str, Any], *, source: str) -> TracerConfig:
    def bad(where: str, problem: str) -> ConfigError:
        return ConfigError(f"{source}: {where} {problem}")

    unknown = sorted(set(raw) - _TOP_KEYS)
    if unknown:
        raise bad("top level", f"has unknown keys {unknown}; known: {sorted(_TOP_KEYS)}")
    tracked = raw.get("trackedObjects")
    if not isinstance(tracked, dict) or not tracked:
        raise bad("trackedObjects", "must be a non-empty mapping of kind keys "
                  "(e.g. apps/v1.Deployment) to their settings")
    namespaces = _namespaces(raw.get("namespaces"), where="namespaces", bad=bad)
    excluded = _namespaces(raw.get("excludeNamespaces"), where="excludeNamespaces", bad=bad)
    kinds = []
    for key, settings in tracked.items():
        try:
            kind = parse_kind_key(str(key), what="tracked kind")
        except ConfigError as exc:
            raise bad(f"trackedObjects.{key}", f"is not usable: {exc.message}") from None
        kinds.append(_kind(kind, settings if settings is not None else {},
                           where=f"trackedObjects.{key}", namespaces=namespaces,
                           excluded=excluded, bad=bad))
    secrets = raw.get("secrets", SecretPolicy.REDACT.value)
    if secrets not in {policy.value for policy in SecretPolicy}:
        raise bad("secrets", f"is {secrets!r}; use redact (keys with empty values) or skip")
    cluster = raw.get("clusterName")
    if cluster is not None and not isinstance(cluster, str):
        raise bad("clusterName", "must be a string")
    return TracerConfig(kinds=tuple(kinds), secrets=SecretPolicy(secrets), cluster_name=cluster,
                        retention=_retention(raw.get("retention", {}), bad=bad),
                        usage=_usage(raw.get("usage", {}), bad=bad))


def _kind(kind: KindKey, settings: Any, *, where: str, namespaces: frozenset[str],
          excluded: frozenset[str], bad: Any) -> KindConfig:
    if not isinstance(settings, dict):
        raise bad(where, "must be a mapping (use {} for a kind without settings)")
    unknown = sorted(set(settings) - _KIND_KEYS)
    if unknown:
        raise bad(where, f"has unknown keys {unknown}; known: {sorted(_KIND_KEYS)}")
    paths = settings.get("podSpecTemplatePaths", [])
    if "podSpecTemplatePath" in settings:  # SimKube's older singular spelling
        paths = [*paths, settings["podSpecTemplatePath"]] if isinstance(paths, list) else paths
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise bad(f"{where}.podSpecTemplatePaths", "must be a list of JSON pointers")
    for path in paths:
        if path and not path.startswith("/"):
            raise bad(f"{where}.podSpecTemplatePaths", f"entry {path!r} is not a JSON pointer "
                      "(it must start with / , or be empty for the object itself)")
    flags = {name: settings.get(name, False) for name in ("trackLifecycle", "skipOwned")}
    for name, value in flags.items():
        if not isinstance(value, bool):
            raise bad(f"{where}.{name}", "must be true or false")
    selector_text = settings.get("labelSelector")
    if selector_text is not None and not isinstance(selector_text, str):
        raise bad(f"{where}.labelSelector", "must be a string such as 'app=web,tier!=db'")
    try:
        selector = parse_selector(selector_text) if selector_text else None
    except ConfigError as exc:
        raise bad(f"{where}.labelSelector", f"is not valid: {exc.message}") from None
    own = _namespaces(settings.get("namespaces"), where=f"{where}.namespaces", bad=bad)
    own_excluded = _namespaces(settings.get("excludeNamespaces"),
                               where=f"{where}.excludeNamespaces", bad=bad)
    return KindConfig(kind=kind, pod_template_paths=tuple(paths),
                      track_lifecycle=flags["trackLifecycle"], skip_owned=flags["skipOwned"],
                      namespaces=own or namespaces, exclude_namespaces=own_excluded | excluded,
                      label_selector=selector)


def _namespaces(raw: Any, *, where: str, bad: Any) -> frozenset[str]:
    if raw is None:
        return frozenset()
    if not isinstance(raw, list):
        raise bad(where, "must be a list of namespace names")
    for name in raw:
        if not valid_namespace(name):
            raise bad(where, f"entry {name!r} is not a valid namespace name")
    return frozenset(raw)


def _retention(raw: Any, *, bad: Any) -> Retention:
    if not isinstance(raw, dict) or set(raw) - {"maxAge", "maxBytes"}:
        raise bad("retention", "must be a mapping with maxAge (e.g. 7d) and/or maxBytes "
                  "(e.g. 10GiB)")
    defaults = Retention()
    try:
        age = (parse_duration(str(raw["maxAge"]), what="retention.maxAge")
               if "maxAge" in raw else defaults.max_age_seconds)
        size = (parse_size(str(raw["maxBytes"]), what="retention.maxBytes")
                if "maxBytes" in raw else defaults.max_bytes)
    except ConfigError as exc:
        raise bad("retention", f"is not valid: {exc.message}") from None
    return Retention(max_age_seconds=age, max_bytes=size)


def _usage(raw: Any, *, bad: Any) -> UsageSettings:
    if not isinstance(raw, dict) or set(raw) - _USAGE_KEYS:
        raise bad("usage", "must be a mapping with period (e.g. 15s; 0 records no usage), "
                  "maxSamples and/or maxWorkloads")
    defaults = UsageSettings()
    counts = {key: raw.get(key, default) for key, default in
              (("maxSamples", defaults.max_samples), ("maxWorkloads", defaults.max_series))}
    for key, value in counts.items():
        if type(value) is not int:
            raise bad(f"usage.{key}", "must be a whole number")
    try:
        period = (parse_duration(str(raw["period"]), what="usage.period") if "period" in raw
                  else defaults.period_seconds)
        return UsageSettings(period_seconds=period, max_samples=counts["maxSamples"],
                             max_series=counts["maxWorkloads"])
    except ConfigError as exc:
        raise bad("usage", f"is not valid: {exc.message}") from None
