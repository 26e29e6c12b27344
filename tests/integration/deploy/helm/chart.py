"""Running the helm the project builds on deploy/helm/simkube, and the rules by which its
output is compared with the kustomize overlays'.

Helm keeps caches and settings under its home directories; every run here points them at a
temporary directory, so a test never reads or writes the user's helm configuration.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.integration.deploy.manifests import DEPLOY, NAMESPACE

CHART = DEPLOY / "helm" / "simkube"
EXAMPLES = tuple(sorted((CHART / "examples").glob("*.yaml")))
RELEASE = "simkube"
# The labels Helm charts conventionally add (release, chart, version); the overlays have none
# of them, so the comparison with kustomize leaves them out.
HELM_LABELS = frozenset({"app.kubernetes.io/managed-by", "app.kubernetes.io/instance",
                         "app.kubernetes.io/version", "helm.sh/chart"})


@dataclass(frozen=True, kw_only=True)
class Helm:
    binary: Path
    home: Path

    def run(self, *args: str | Path) -> subprocess.CompletedProcess[str]:
        env = {"HOME": str(self.home), "PATH": "/usr/bin:/bin",
               **{f"HELM_{kind}_HOME": str(self.home / kind.lower())
                  for kind in ("CACHE", "CONFIG", "DATA")}}
        return subprocess.run([str(self.binary), *map(str, args)], capture_output=True,
                              text=True, timeout=120, check=False, env=env)

    def ok(self, *args: str | Path) -> str:
        result = self.run(*args)
        assert result.returncode == 0, (f"helm {' '.join(map(str, args))} failed "
                                        f"({result.returncode}):\n{result.stdout}\n"
                                        f"{result.stderr}")
        return result.stdout

    def template(self, *values: Path, include_crds: bool = True,
                 sets: tuple[str, ...] = (), namespace: str = NAMESPACE) -> list[dict[str, Any]]:
        args: list[str | Path] = ["template", RELEASE, CHART, "--namespace", namespace]
        if include_crds:
            args.append("--include-crds")
        for path in values:
            args += ["--values", path]
        for assignment in sets:
            args += ["--set", assignment]
        return [doc for doc in yaml.safe_load_all(self.ok(*args)) if doc]


def key(o: dict[str, Any]) -> tuple[str, str, str, str]:
    meta = o["metadata"]
    return (o["apiVersion"], o["kind"], meta.get("namespace", ""), meta["name"])


def _parsed(text: str) -> list[Any]:
    return [doc for doc in yaml.safe_load_all(text) if doc is not None]


def normalized(o: dict[str, Any], generated: frozenset[str]) -> dict[str, Any]:
    """An object as both tools should agree on it. What differs on purpose is taken out:
    Helm's release labels; the checksum annotations by which the chart rolls a Deployment
    when its ConfigMap changes (kustomize does that with a content hash in the name, which
    is cut from ``generated`` ConfigMaps and the volumes that mount them); and the
    formatting of ConfigMap files (the overlays' have comments, the chart's are rendered
    from values), compared parsed."""
    o = yaml.safe_load(yaml.safe_dump(o))  # a deep copy
    meta = o["metadata"]
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k not in HELM_LABELS}
    meta["labels"] = labels
    if o["kind"] == "ConfigMap":
        meta["name"] = _base(meta["name"], generated)
        o["data"] = {name: _parsed(text) for name, text in o.get("data", {}).items()}
    if o["kind"] == "Deployment":
        template = o["spec"]["template"]
        notes = {k: v for k, v in (template["metadata"].get("annotations") or {}).items()
                 if not k.startswith("checksum/")}
        template["metadata"].pop("annotations", None)
        if notes:
            template["metadata"]["annotations"] = notes
        for volume in template["spec"].get("volumes", []):
            if "configMap" in volume:
                volume["configMap"]["name"] = _base(volume["configMap"]["name"], generated)
    return o


def _base(name: str, generated: frozenset[str]) -> str:
    for base in generated:
        if name == base or (name.startswith(f"{base}-") and len(name) == len(base) + 11):
            return base
    return name
