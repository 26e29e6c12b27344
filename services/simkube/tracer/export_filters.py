"""Which objects an export keeps: namespaces, label selectors and kinds, checked up front.

Filters arrive from gRPC requests and command lines, so parsing them is where bad input is
caught: every value is checked before an export reads anything, with the same kind-key and
label-selector parsers the config uses, and a ``ConfigError`` names the bad value.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgpack

from simkube.core.errors import ConfigError
from simkube.trace import LabelSelector, ObjectRef, parse_selector
from simkube.tracer.config import valid_namespace
from simkube.tracer.kinds import parse_kind_key


@dataclass(frozen=True, slots=True, kw_only=True)
class ExportFilters:
    include_namespaces: frozenset[str] = frozenset()
    exclude_namespaces: frozenset[str] = frozenset()
    selectors: tuple[LabelSelector, ...] = ()
    include_kinds: frozenset[str] = frozenset()
    exclude_kinds: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, *, include_namespaces: list[str], exclude_namespaces: list[str],
              label_selectors: list[str], include_kinds: list[str],
              exclude_kinds: list[str]) -> ExportFilters:
        """Checked filters; a ``ConfigError`` names the first bad value."""
        for name in (*include_namespaces, *exclude_namespaces):
            if not valid_namespace(name):
                raise ConfigError(f"namespace {name!r} is not a valid namespace name")
        both = sorted(set(include_namespaces) & set(exclude_namespaces))
        if both:
            raise ConfigError(f"namespaces {both} are both included and excluded")
        kinds = [parse_kind_key(text, what="kind filter")
                 for text in (*include_kinds, *exclude_kinds)]
        return cls(include_namespaces=frozenset(include_namespaces),
                   exclude_namespaces=frozenset(exclude_namespaces),
                   selectors=tuple(parse_selector(text) for text in label_selectors),
                   include_kinds=frozenset(k.key for k in kinds[:len(include_kinds)]),
                   exclude_kinds=frozenset(k.key for k in kinds[len(include_kinds):]))

    def admits(self, ref: ObjectRef) -> bool:
        """Kind and namespace filters; cluster-scoped objects pass namespace filters."""
        key = ref.kind_key
        if (self.include_kinds and key not in self.include_kinds) or key in self.exclude_kinds:
            return False
        if not ref.namespace:
            return True
        if self.include_namespaces and ref.namespace not in self.include_namespaces:
            return False
        return ref.namespace not in self.exclude_namespaces

    def admits_body(self, body: bytes) -> bool:
        if not self.selectors:
            return True
        labels = (msgpack.unpackb(body, raw=False).get("metadata") or {}).get("labels") or {}
        labels = {str(key): str(value) for key, value in labels.items()}
        return all(selector.matches(labels) for selector in self.selectors)
