"""``skctl sweep run --on-cluster``: rendering without a cluster, and what is refused before
any cluster is contacted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from simkube.core.errors import ConfigError
from simkube.skctl import sweep_cluster
from simkube.skctl.main import cli
from tests.unit.sweep.files import write_sweep

pytestmark = pytest.mark.unit
AXES = [{"caFlag": "--expander", "values": ["least-waste", "price"]}]


@pytest.fixture(autouse=True)
def no_cluster(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Fail any test that would reach a cluster."""
    calls: list[Any] = []

    def refuse(*args: Any) -> None:
        calls.append(args)
        raise AssertionError("a cluster was contacted")

    monkeypatch.setattr(sweep_cluster, "with_cluster", refuse)
    return calls


def test_render_prints_the_configmap_and_the_job(tmp_path: Path) -> None:
    path = write_sweep(tmp_path, axes=AXES)
    result = CliRunner().invoke(cli, ["sweep", "run", str(path), "--on-cluster", "--render",
                                      "--image", "img:1", "--pvc", "results", "--parallel", "2"])
    assert result.exit_code == 0, result.output
    config_map, job = yaml.safe_load_all(result.output)
    assert config_map["kind"] == "ConfigMap"
    assert job["spec"]["completions"] == 2
    assert job["spec"]["completionMode"] == "Indexed"


def test_on_cluster_needs_an_image_and_a_volume(tmp_path: Path) -> None:
    path = write_sweep(tmp_path, axes=AXES)
    result = CliRunner().invoke(cli, ["sweep", "run", str(path), "--on-cluster", "--render"])
    assert isinstance(result.exception, ConfigError)
    assert result.exception.message.startswith("--on-cluster needs --image and --pvc")


def test_cluster_flags_without_on_cluster_are_refused(tmp_path: Path) -> None:
    path = write_sweep(tmp_path, axes=AXES)
    result = CliRunner().invoke(cli, ["sweep", "run", str(path), "--output",
                                      str(tmp_path / "out"), "--pvc", "results", "--dry-run"])
    assert isinstance(result.exception, ConfigError)
    assert result.exception.message == "--pvc, --dry-run only apply with --on-cluster"
    assert not (tmp_path / "out").exists()


def test_run_without_output_says_so(tmp_path: Path) -> None:
    path = write_sweep(tmp_path, axes=AXES)
    result = CliRunner().invoke(cli, ["sweep", "run", str(path)])
    assert isinstance(result.exception, ConfigError)
    assert result.exception.message == ("give --output DIR (the sweep's directory), "
                                        "or --on-cluster")


def test_objects_are_applied_to_their_own_urls() -> None:
    config_map = {"apiVersion": "v1", "kind": "ConfigMap",
                  "metadata": {"name": "a", "namespace": "n"}}
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "b", "namespace": "n"}}
    assert sweep_cluster._path(config_map) == "/api/v1/namespaces/n/configmaps/a"
    assert sweep_cluster._path(job) == "/apis/batch/v1/namespaces/n/jobs/b"
