"""The pod-autoscaling steps of ``skctl trace edit``: an HPA's target and bounds, the load.

Typed values checked when made, so a step that could not do what it says (no change, a
target of 0, min above max, a load factor of 0) is refused before any trace is read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from simkube.core.errors import ConfigError
from simkube.trace.model.selectors import Match


@dataclass(frozen=True, slots=True, kw_only=True)
class HpaChange:
    """Change one HorizontalPodAutoscaler (every recorded version of it): its CPU target
    utilization (percent), minReplicas and maxReplicas; ``None`` leaves a field as recorded."""

    namespace: str
    name: str
    cpu_utilization: int | None = None
    min_replicas: int | None = None
    max_replicas: int | None = None

    def __post_init__(self) -> None:
        what = f"the HPA change of {self.namespace}/{self.name}"
        if (self.cpu_utilization, self.min_replicas, self.max_replicas) == (None, None, None):
            raise ConfigError(f"{what} changes nothing: give a CPU target, min or max replicas")
        for field_name, value in (("CPU target", self.cpu_utilization),
                                  ("min replicas", self.min_replicas),
                                  ("max replicas", self.max_replicas)):
            if value is not None and (type(value) is not int or value < 1):
                raise ConfigError(f"{what}: {field_name} must be a whole number of at least 1, "
                                  f"not {value!r}")
        if (self.min_replicas is not None and self.max_replicas is not None
                and self.min_replicas > self.max_replicas):
            raise ConfigError(f"{what}: min replicas {self.min_replicas} exceed max replicas "
                              f"{self.max_replicas}")


@dataclass(frozen=True, slots=True, kw_only=True)
class ScaleLoad:
    """Multiply the recorded usage of matching workloads by ``factor`` (CPU and memory)."""

    factor: float
    match: Match = field(default_factory=Match)

    def __post_init__(self) -> None:
        if isinstance(self.factor, bool) or not isinstance(self.factor, int | float) or not (
                self.factor > 0 and self.factor != float("inf")):
            raise ConfigError(f"the load factor must be a number greater than 0, not "
                              f"{self.factor!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class DropUsage:
    """Remove the recorded usage (e.g. to write a SimKube trace, which cannot hold it)."""

    match: Match = field(default_factory=Match)


def hpa_name(text: str, *, what: str) -> tuple[str, str]:
    """``namespace/name`` of an HPA (HPAs are namespaced, so the namespace is required)."""
    namespace, sep, name = str(text).partition("/")
    if not sep or not namespace or not name or "/" in name:
        raise ConfigError(f"{what}: {text!r} is not namespace/name, e.g. shop/web")
    return namespace, name
