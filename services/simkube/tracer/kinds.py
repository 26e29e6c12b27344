"""Kind keys (``group/version.Kind``): parsing them once, with errors that show the syntax.

Config files, export filters and traces all name kinds the way SimKube does
(``apps/v1.Deployment``, ``v1.Pod``), so one parser serves them all and every caller gets the
same message for the same mistake.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from simkube.core.errors import ConfigError
from simkube.core.kubeapi import GroupVersionKind, group_version_path

_KIND_KEY = re.compile(
    r"^(?:(?P<group>[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)/)?"
    r"(?P<version>v[0-9]+(?:(?:alpha|beta)[0-9]+)?)\.(?P<kind>[A-Z][A-Za-z0-9]*)$")


@dataclass(frozen=True, slots=True, kw_only=True)
class KindKey(GroupVersionKind):
    """A kind the tracer tracks or meets as an owner, written ``group/version.Kind``."""

    @property
    def key(self) -> str:
        return f"{self.api_version}.{self.kind}"

    @property
    def api_prefix(self) -> str:
        """Where the group/version is served: ``/api/v1`` or ``/apis/apps/v1``."""
        return group_version_path(self.api_version)

    def __str__(self) -> str:
        return self.key

    @classmethod
    def of(cls, api_version: str, kind: str) -> KindKey:
        group, _, version = api_version.rpartition("/")
        return cls(group=group, version=version, kind=kind)


def parse_kind_key(text: str, *, what: str = "kind") -> KindKey:
    """``apps/v1.Deployment`` → KindKey; a ``ConfigError`` explains the expected shape."""
    match = _KIND_KEY.match(text.strip()) if isinstance(text, str) else None
    if match is None:
        raise ConfigError(
            f"{what} {text!r} is not a kind key; write group/version.Kind "
            "(e.g. apps/v1.Deployment, sparkoperator.k8s.io/v1beta2.SparkApplication) or "
            "version.Kind for the core group (e.g. v1.ConfigMap)")
    return KindKey(group=match["group"] or "", version=match["version"], kind=match["kind"])
