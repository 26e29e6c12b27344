"""Kubernetes label selectors (``app=web,tier!=db,env in (a,b),!canary``), parsed and matched.

The tracer passes a kind's selector to the API server, but it must still reject a malformed
one before it starts (the API server's complaint would arrive much later, per kind, as a
watch error), and Export filters stored objects with the same syntax, so the grammar lives
here once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from simkube.core.errors import ConfigError

_KEY = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                  r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$")
_SET = re.compile(r"^(?P<key>\S+)\s+(?P<op>in|notin)\s*\((?P<values>[^()]*)\)$")
_EQUALITY = re.compile(r"^(?P<key>[^!=\s]+)\s*(?P<op>==|=|!=)\s*(?P<value>\S*)$")


class Operator(Enum):
    EQUALS = "="
    NOT_EQUALS = "!="
    IN = "in"
    NOT_IN = "notin"
    EXISTS = "exists"
    DOES_NOT_EXIST = "!"


@dataclass(frozen=True, slots=True, kw_only=True)
class Requirement:
    key: str
    operator: Operator
    values: frozenset[str] = frozenset()

    def matches(self, labels: dict[str, str]) -> bool:
        present = self.key in labels
        if self.operator is Operator.EXISTS:
            return present
        if self.operator is Operator.DOES_NOT_EXIST:
            return not present
        if self.operator in (Operator.EQUALS, Operator.IN):
            return present and labels[self.key] in self.values
        return not present or labels[self.key] not in self.values


@dataclass(frozen=True, slots=True, kw_only=True)
class LabelSelector:
    text: str
    requirements: tuple[Requirement, ...]

    def matches(self, labels: dict[str, str]) -> bool:
        return all(requirement.matches(labels) for requirement in self.requirements)


def parse_selector(text: str, *, what: str = "label selector") -> LabelSelector:
    """Parse ``text``; a ``ConfigError`` names the requirement that is wrong and why."""
    requirements = tuple(_requirement(part.strip(), text=text, what=what)
                         for part in _split(text, what=what) if part.strip())
    return LabelSelector(text=text.strip(), requirements=requirements)


def _split(text: str, *, what: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                raise ConfigError(f"{what} {text!r} has an unmatched ')'")
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    if depth:
        raise ConfigError(f"{what} {text!r} has an unclosed '('")
    parts.append("".join(current))
    return parts


def _requirement(part: str, *, text: str, what: str) -> Requirement:
    def bad(reason: str) -> ConfigError:
        return ConfigError(f"{what} {text!r}: {part!r} {reason}; write key=value, key!=value, "
                           "key in (a,b), key notin (a,b), key or !key")

    def key_of(key: str) -> str:
        if len(key.rpartition("/")[2]) > 63 or not _KEY.match(key):
            raise bad(f"has an invalid label key {key!r}")
        return key

    def values_of(values: list[str]) -> frozenset[str]:
        for value in values:
            if len(value) > 63 or not _VALUE.match(value):
                raise bad(f"has an invalid label value {value!r}")
        return frozenset(values)

    if match := _SET.match(part):
        values = [value.strip() for value in match["values"].split(",")]
        if not any(values):
            raise bad("lists no values")
        operator = Operator.IN if match["op"] == "in" else Operator.NOT_IN
        return Requirement(key=key_of(match["key"]), operator=operator,
                           values=values_of(values))
    if match := _EQUALITY.match(part):
        operator = Operator.NOT_EQUALS if match["op"] == "!=" else Operator.EQUALS
        return Requirement(key=key_of(match["key"]), operator=operator,
                           values=values_of([match["value"]]))
    if part.startswith("!"):
        return Requirement(key=key_of(part[1:].strip()), operator=Operator.DOES_NOT_EXIST)
    if " " in part or "(" in part or "=" in part:
        raise bad("is not a requirement")
    return Requirement(key=key_of(part), operator=Operator.EXISTS)
