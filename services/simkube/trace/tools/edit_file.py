"""Reading ``skctl trace edit --steps FILE``: a YAML list of what-if steps, applied in order.

    steps:
      - window: {start: 5m, duration: 10m}
      - keep: {namespaces: [dsb]}
      - scale-replicas: {factor: 10, kinds: [Deployment]}
      - hpa: {name: shop/web, cpu-target: 80, min-replicas: 2, max-replicas: 20}
      - scale-load: {factor: 2, namespaces: [shop]}

Unknown step names and unknown fields are errors (a typo must not silently do nothing).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from simkube.core.config import load_yaml_mapping
from simkube.core.errors import ConfigError
from simkube.trace.tools import edit_steps
from simkube.trace.tools.edit_steps import match_from, number, parse_duration, parse_time_point

MATCH_FIELDS = {"namespaces", "kinds", "selector"}
APPLY_TO = {"requests": (True, False), "limits": (False, True), "both": (True, True)}


def load_steps(path: Path) -> list[edit_steps.EditStep]:
    document = load_yaml_mapping(path, what="edit steps file")
    return parse_steps(document.get("steps"), where=f"{path}: steps")


def parse_steps(raw: Any, *, where: str = "steps") -> list[edit_steps.EditStep]:
    if not isinstance(raw, list) or not raw:
        raise ConfigError(f"{where} must be a non-empty list of steps")
    steps = []
    for index, item in enumerate(raw):
        what = f"{where}[{index}]"
        if not isinstance(item, dict) or len(item) != 1:
            raise ConfigError(f"{what} must be a mapping with exactly one step name, e.g. "
                              "'keep: {namespaces: [dsb]}'")
        ((name, body),) = item.items()
        parser = _PARSERS.get(name)
        if parser is None:
            raise ConfigError(f"{what}: unknown step {name!r}; known: {', '.join(_PARSERS)}")
        steps.append(parser(body, f"{what}.{name}"))
    return steps


def _fields(body: Any, what: str, allowed: set[str]) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise ConfigError(f"{what} must be a mapping")
    unknown = set(body) - allowed
    if unknown:
        raise ConfigError(f"{what}: unknown field(s) {', '.join(sorted(map(str, unknown)))}; "
                          f"allowed: {', '.join(sorted(allowed))}")
    return body


def _window(body: Any, what: str) -> edit_steps.TimeWindow:
    fields = _fields(body, what, {"start", "end", "duration"})
    if "end" in fields and "duration" in fields:
        raise ConfigError(f"{what}: give end or duration, not both")
    return edit_steps.TimeWindow(
        start=parse_time_point(fields["start"], what=f"{what}.start") if "start" in fields
        else None,
        end=parse_time_point(fields["end"], what=f"{what}.end") if "end" in fields else None,
        duration_ms=parse_duration(fields["duration"], what=f"{what}.duration")
        if "duration" in fields else None)


def _select(keep: bool) -> Callable[[Any, str], edit_steps.EditStep]:
    def parse(body: Any, what: str) -> edit_steps.EditStep:
        fields = _fields(body, what, MATCH_FIELDS)
        if not fields:
            raise ConfigError(f"{what} needs namespaces, kinds or selector")
        return edit_steps.Select(keep=keep, match=match_from(fields, what=what))
    return parse


def _scale_replicas(body: Any, what: str) -> edit_steps.ScaleReplicas:
    fields = _fields(body, what, {"factor", "set"} | MATCH_FIELDS)
    if ("factor" in fields) == ("set" in fields):
        raise ConfigError(f"{what} needs exactly one of factor or set")
    value = fields.get("set")
    if value is not None and (type(value) is not int or value < 0):
        raise ConfigError(f"{what}.set must be a whole number of replicas (0 or more)")
    return edit_steps.ScaleReplicas(
        factor=number(fields["factor"], what=f"{what}.factor", positive=False)
        if "factor" in fields else None, value=value, match=match_from(fields, what=what))


def _scale_resources(body: Any, what: str) -> edit_steps.ScaleResources:
    fields = _fields(body, what, {"cpu", "memory", "apply-to"} | MATCH_FIELDS)
    apply_to = fields.get("apply-to", "both")
    if apply_to not in APPLY_TO:
        raise ConfigError(f"{what}.apply-to must be requests, limits or both")
    requests, limits = APPLY_TO[apply_to]
    return edit_steps.ScaleResources(cpu=number(fields.get("cpu", 1.0), what=f"{what}.cpu"),
                          memory=number(fields.get("memory", 1.0), what=f"{what}.memory"),
                          requests=requests, limits=limits, match=match_from(fields, what=what))


def _node_selector(body: Any, what: str) -> edit_steps.NodeSelector:
    fields = _fields(body, what, {"add", "remove"} | MATCH_FIELDS)
    add = fields.get("add", {})
    remove = fields.get("remove", [])
    if not isinstance(add, dict) or not all(isinstance(v, str) for v in add.values()):
        raise ConfigError(f"{what}.add must map label keys to string values")
    if not isinstance(remove, list) or not all(isinstance(key, str) for key in remove):
        raise ConfigError(f"{what}.remove must be a list of label keys")
    return edit_steps.NodeSelector(add=tuple((str(k), v) for k, v in add.items()),
                        remove=frozenset(remove), match=match_from(fields, what=what))


def _tolerations(body: Any, what: str) -> edit_steps.Tolerations:
    fields = _fields(body, what, {"add", "remove"} | MATCH_FIELDS)
    add = fields.get("add", [])
    remove = fields.get("remove", [])
    if not isinstance(add, list) or not all(isinstance(t, dict) and "key" in t for t in add):
        raise ConfigError(f"{what}.add must be a list of tolerations, each with a key")
    if not isinstance(remove, list) or not all(isinstance(key, str) for key in remove):
        raise ConfigError(f"{what}.remove must be a list of toleration keys")
    return edit_steps.Tolerations(add=tuple(tuple(sorted(t.items())) for t in add),
                       remove=frozenset(remove), match=match_from(fields, what=what))


def _time_stretch(body: Any, what: str) -> edit_steps.TimeStretch:
    factor = body.get("factor") if isinstance(body, dict) else body
    return edit_steps.TimeStretch(factor=number(factor, what=what))


def _hpa(body: Any, what: str) -> edit_steps.HpaChange:
    fields = _fields(body, what, {"name", "cpu-target", "min-replicas", "max-replicas"})
    if "name" not in fields:
        raise ConfigError(f"{what} needs name: namespace/name of the HPA")
    namespace, name = edit_steps.hpa_name(fields["name"], what=f"{what}.name")
    try:
        return edit_steps.HpaChange(namespace=namespace, name=name,
                                    cpu_utilization=fields.get("cpu-target"),
                                    min_replicas=fields.get("min-replicas"),
                                    max_replicas=fields.get("max-replicas"))
    except ConfigError as exc:
        raise ConfigError(f"{what}: {exc.message}") from None


def _scale_load(body: Any, what: str) -> edit_steps.ScaleLoad:
    fields = _fields(body, what, {"factor"} | MATCH_FIELDS)
    return edit_steps.ScaleLoad(factor=number(fields.get("factor"), what=f"{what}.factor"),
                                match=match_from(fields, what=what))


def _drop_usage(body: Any, what: str) -> edit_steps.DropUsage:
    fields = _fields(body or {}, what, MATCH_FIELDS)
    return edit_steps.DropUsage(match=match_from(fields, what=what))


_PARSERS: dict[str, Callable[[Any, str], edit_steps.EditStep]] = {
    "window": _window,
    "keep": _select(keep=True),
    "drop": _select(keep=False),
    "scale-replicas": _scale_replicas,
    "scale-resources": _scale_resources,
    "node-selector": _node_selector,
    "tolerations": _tolerations,
    "time-stretch": _time_stretch,
    "hpa": _hpa,
    "scale-load": _scale_load,
    "drop-usage": _drop_usage,
    # The step's first name, still read so older edit files keep working; it is not a
    # run's speed (its factor runs the other way), hence the new one.
    "time-scale": _time_stretch,
}
