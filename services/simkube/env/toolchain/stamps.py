"""The ``-X`` linker flags that stamp versions into upstream binaries, as their own release
builds do: ``go build`` of a module leaves those variables at their development defaults, so
``kubectl version`` or ``helm version`` would otherwise report no or a partial version, and
helm would assume an old Kubernetes for ``.Capabilities`` and lint.
"""

from __future__ import annotations

import re
from pathlib import Path


def kubernetes_stamps(version: str) -> tuple[str, ...]:
    major, minor = version.removeprefix("v").split(".")[:2]
    stamps = {"gitVersion": version, "gitMajor": major, "gitMinor": minor,
              "gitTreeState": "clean"}
    return tuple(
        f"-X {package}.{key}={value}"
        for package in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version")
        for key, value in stamps.items()
    )


def helm_stamps(version: str, *, go_mod: Path) -> tuple[str, ...]:
    """What helm's own Makefile stamps: its version, and the Kubernetes version its default
    capabilities (``.Capabilities.KubeVersion``, lint's deprecation checks) assume, which it
    derives from the client-go it is built with as 1.<minor> (client-go v0.37.x -> 1.37)."""
    match = re.search(r"^\s*k8s\.io/client-go v0\.(\d+)\.", go_mod.read_text(), re.MULTILINE)
    minor = match[1] if match else "0"  # a go.mod without it fails the build, not the import
    stamps = [f"-X helm.sh/helm/v3/internal/version.version={version}",
              "-X helm.sh/helm/v3/internal/version.gitTreeState=clean"]
    stamps += [f"-X helm.sh/helm/v3/pkg/{package}.k8sVersion{part}={value}"
               for package in ("chartutil", "lint/rules")
               for part, value in (("Major", "1"), ("Minor", minor))]
    return tuple(stamps)
