"""Label selectors (kubectl's string syntax) and the object matching ``edit`` steps share.

``app=web,tier!=db,env in (prod,staging),!legacy`` means what it means to kubectl, so users
can paste the selectors they already use. A ``Match`` adds namespaces and kinds; every part
given must match (an empty ``Match`` matches everything).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from simkube.core.errors import ConfigError
from simkube.trace.model.types import ObjectRef


class SelectorOp(Enum):
    EQUALS = "="
    NOT_EQUALS = "!="
    IN = "in"
    NOT_IN = "notin"
    EXISTS = "exists"
    DOES_NOT_EXIST = "!"


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    op: SelectorOp
    values: frozenset[str] = frozenset()

    def matches(self, labels: dict[str, str]) -> bool:
        value = labels.get(self.key)
        if self.op is SelectorOp.EXISTS:
            return value is not None
        if self.op is SelectorOp.DOES_NOT_EXIST:
            return value is None
        if self.op in (SelectorOp.EQUALS, SelectorOp.IN):
            return value in self.values
        return value not in self.values  # != and notin also match objects without the key


@dataclass(frozen=True, slots=True)
class LabelSelector:
    requirements: tuple[Requirement, ...]
    text: str

    def matches(self, labels: dict[str, str]) -> bool:
        return all(requirement.matches(labels) for requirement in self.requirements)

    def __str__(self) -> str:
        return self.text


_KEY = r"(?P<key>[A-Za-z0-9](?:[-A-Za-z0-9_./]*[A-Za-z0-9])?)"
_VALUE = r"(?P<value>(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?)"
_SET = re.compile(rf"^{_KEY}\s+(?P<op>in|notin)\s*\((?P<values>[^()]*)\)$")
_EQUALITY = re.compile(rf"^{_KEY}\s*(?P<op>==|=|!=)\s*{_VALUE}$")
_EXISTS = re.compile(rf"^(?P<not>!?)\s*{_KEY}$")


def parse_selector(text: str) -> LabelSelector:
    """Parse a label selector; a ``ConfigError`` names the part that does not parse."""
    if not text.strip():
        raise ConfigError("a label selector cannot be empty")
    return LabelSelector(tuple(_requirement(part.strip(), text) for part in _split(text)), text)


def _split(text: str) -> list[str]:
    """Split at commas outside parentheses."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return parts


def _requirement(part: str, text: str) -> Requirement:
    if found := _SET.match(part):
        values = frozenset(value.strip() for value in found["values"].split(",")
                           if value.strip())
        return Requirement(found["key"], SelectorOp(found["op"]), values)
    if found := _EQUALITY.match(part):
        op = SelectorOp.NOT_EQUALS if found["op"] == "!=" else SelectorOp.EQUALS
        return Requirement(found["key"], op, frozenset({found["value"]}))
    if found := _EXISTS.match(part):
        op = SelectorOp.DOES_NOT_EXIST if found["not"] else SelectorOp.EXISTS
        return Requirement(found["key"], op)
    raise ConfigError(f"label selector {text!r}: cannot parse {part!r}",
                      hint="use kubectl's syntax, e.g. 'app=web,tier!=db,env in (a,b),!legacy'")


@dataclass(frozen=True, slots=True, kw_only=True)
class Match:
    """Which objects a step applies to: all parts given must match."""

    namespaces: frozenset[str] = frozenset()
    kinds: frozenset[str] = frozenset()  # "Deployment" (any group/version) or "apps/v1.Deployment"
    selector: LabelSelector | None = None

    def matches(self, ref: ObjectRef, labels: dict[str, str]) -> bool:
        if self.namespaces and ref.namespace not in self.namespaces:
            return False
        if self.kinds and not self.matches_kind(ref.kind_key):
            return False
        return self.selector is None or self.selector.matches(labels)

    def matches_kind(self, kind_key: str) -> bool:
        bare = kind_key.rsplit(".", 1)[-1].lower()
        return any(kind == kind_key or kind.lower() == bare for kind in self.kinds)
