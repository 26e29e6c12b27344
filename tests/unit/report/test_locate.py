from __future__ import annotations

import json
from pathlib import Path

import pytest

from simkube.core.errors import ConfigError
from simkube.report import locate
from tests.unit.report.known_run import write_run

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("text", "simulation", "run"), [
    ("shop", "shop", None), ("shop/run-3", "shop", 3), ("a-b.c/run-12", "a-b.c", 12),
])
def test_run_references(text: str, simulation: str, run: int | None) -> None:
    assert locate.parse_ref(text) == locate.RunRef(simulation=simulation, run=run)


@pytest.mark.parametrize("text", ["Shop", "shop/run-0", "shop/3", "shop/run-x", "/run-1", ""])
def test_bad_run_references(text: str) -> None:
    with pytest.raises(ConfigError, match="not a run reference"):
        locate.parse_ref(text)


def test_results_option_is_the_root_or_the_simulation_directory(tmp_path: Path) -> None:
    write_run(tmp_path, run=1)
    write_run(tmp_path, run=10)
    (tmp_path / "shop" / "run-x").mkdir()
    (tmp_path / "shop" / "report").mkdir()
    assert locate.simulation_dir(name="shop", results=tmp_path) == tmp_path / "shop"
    assert locate.simulation_dir(name="shop", results=tmp_path / "shop") == tmp_path / "shop"
    assert locate.run_numbers(tmp_path / "shop") == [1, 10]
    assert locate.run_dir(tmp_path / "shop", run=None) == tmp_path / "shop" / "run-10"
    assert locate.run_dir(tmp_path / "shop", run=1) == tmp_path / "shop" / "run-1"
    with pytest.raises(ConfigError, match="has no run 2") as error:
        locate.run_dir(tmp_path / "shop", run=2)
    assert "1, 10" in str(error.value)
    with pytest.raises(ConfigError, match="no results of simulation 'cart'"):
        locate.simulation_dir(name="cart", results=tmp_path)


def test_local_environment_results_when_no_cluster_answers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIMKUBE_HOME", str(tmp_path))
    env = tmp_path / "envs" / "dev"
    results = tmp_path / "results" / "dev"  # outside the env directory: it outlives env down
    write_run(results)
    env.mkdir(parents=True)
    # A recorded environment whose API server is gone: the lookup falls back, quickly.
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'http://127.0.0.1:9'}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {}}]\n")
    (env / "state.json").write_text(json.dumps({
        "name": "dev", "directory": str(env), "kubeconfig": str(kubeconfig), "api_server": "x",
        "started_at": 0}))
    assert locate.simulation_dir(name="shop", results=None, env="dev") == results / "shop"
    assert locate.simulation_dir(name="shop", results=None, env="dev",
                                 kubeconfig=kubeconfig) == results / "shop"
    with pytest.raises(ConfigError, match="no results for simulation 'cart'") as error:
        locate.simulation_dir(name="cart", results=None, env="dev")
    assert error.value.hint is not None
    assert "--results" in error.value.hint
