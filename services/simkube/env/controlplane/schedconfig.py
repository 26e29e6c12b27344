"""The KubeSchedulerConfiguration the simulated scheduler runs with.

Users tune the scheduler they simulate with ``--scheduler-config``; we keep their profiles and
plugin settings and only set what ties the scheduler to this environment: its kubeconfig, no
leader election, and client rate limits high enough for a replay (unless they set their own).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from simkube.core.config import load_yaml_mapping
from simkube.core.errors import ConfigError

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
DEFAULT_QPS = 1000
DEFAULT_BURST = 2000


def load_user_config(path: Path) -> dict[str, Any]:
    config = load_yaml_mapping(path, what="scheduler config")
    if config.get("kind") != KIND:
        raise ConfigError(f"scheduler config {path} has kind {config.get('kind')!r}; "
                          f"expected {KIND!r}")
    if config.get("apiVersion") != API_VERSION:
        raise ConfigError(f"scheduler config {path} has apiVersion "
                          f"{config.get('apiVersion')!r}; expected {API_VERSION!r}")
    for key in ("clientConnection", "leaderElection"):
        if key in config and not isinstance(config[key], dict):
            raise ConfigError(f"scheduler config {path}: {key} must be a mapping")
    return config


def write_scheduler_config(*, path: Path, kubeconfig: Path,
                           user_config: dict[str, Any] | None = None) -> Path:
    config: dict[str, Any] = dict(user_config or {"apiVersion": API_VERSION, "kind": KIND})
    connection = dict(config.get("clientConnection") or {})
    connection["kubeconfig"] = str(kubeconfig)
    connection.setdefault("qps", DEFAULT_QPS)
    connection.setdefault("burst", DEFAULT_BURST)
    config["clientConnection"] = connection
    config["leaderElection"] = {**(config.get("leaderElection") or {}), "leaderElect": False}
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path
