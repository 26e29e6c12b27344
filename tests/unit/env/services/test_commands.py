"""The services' command lines: sk-ctrl learns where Cluster Autoscaler's metrics are."""

from __future__ import annotations

from pathlib import Path

import pytest

from simkube.env.controlplane.components import Layout
from simkube.env.services.commands import ServicePorts, service_specs

pytestmark = pytest.mark.unit


def ctrl_argv(tmp_path: Path, **extra: object) -> list[str]:
    specs = service_specs(env_name="e", layout=Layout(root=tmp_path),
                          ports=ServicePorts.from_list(list(range(7000, 7006))),
                          node_groups=tmp_path / "groups.yaml", results=tmp_path,
                          **extra)  # type: ignore[arg-type]
    return next(spec.argv for spec in specs if spec.name == "sk-ctrl")


def test_sk_ctrl_gets_the_autoscaler_metrics_url_only_when_there_is_one(tmp_path: Path) -> None:
    url = "http://127.0.0.1:7100/metrics"
    assert f"--autoscaler-metrics-url={url}" in ctrl_argv(tmp_path, autoscaler_metrics_url=url)
    assert not [arg for arg in ctrl_argv(tmp_path) if "autoscaler-metrics" in arg]
