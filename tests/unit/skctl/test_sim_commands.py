"""``skctl run`` refuses what sk-driver would refuse before it creates anything."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from simkube.core.errors import ConfigError
from simkube.skctl import sim_client, sim_commands

pytestmark = pytest.mark.unit
TRACE = Path(__file__).parents[2] / "data" / "simkube" / "cronjob.sktrace"


@pytest.fixture
def created(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What reaches the cluster: a fake in place of the API, so a refusal can be seen to
    come first."""
    sent: list[dict[str, Any]] = []

    async def create(_kube: Any, simulation: dict[str, Any]) -> dict[str, Any]:
        sent.append(simulation)
        return simulation

    def with_cluster(_kubeconfig: Any, _env: Any,
                     action: Callable[[Any], Awaitable[Any]]) -> Any:
        return asyncio.run(action(None))

    monkeypatch.setattr(sim_client, "create", create)
    monkeypatch.setattr(sim_commands, "with_cluster", with_cluster)
    return sent


@pytest.mark.parametrize(("speed", "message"), [
    ("2e6", "--speed 2e+06 is above the maximum 1e+06"),
    ("0", "--speed '0' must be a positive number"),
    ("nan", "--speed 'nan' must be a positive number"),
    ("fast", "--speed 'fast' is not a number"),
])
def test_a_speed_sk_driver_would_refuse_is_refused_before_anything_is_created(
        speed: str, message: str, created: list[dict[str, Any]]) -> None:
    result = CliRunner().invoke(sim_commands.run_command, [
        "--name", "x", "--trace", str(TRACE), "--speed", speed])
    assert result.exit_code == 2
    assert "Invalid value for '--speed'" in result.output
    assert message in result.output
    assert created == []


def test_the_ceiling_itself_is_accepted_and_sent_as_a_number(
        created: list[dict[str, Any]]) -> None:
    result = CliRunner().invoke(sim_commands.run_command, [
        "--name", "x", "--trace", str(TRACE), "--speed", "1e6"])
    assert result.exit_code == 0, result.output
    assert [sim["spec"]["speed"] for sim in created] == [1_000_000.0]


def test_a_file_with_such_a_speed_is_refused_too(tmp_path: Path,
                                                 created: list[dict[str, Any]]) -> None:
    manifest = tmp_path / "sim.yaml"
    manifest.write_text(yaml.safe_dump({
        "apiVersion": "simkube.dev/v1alpha1", "kind": "Simulation",
        "metadata": {"name": "x"}, "spec": {"trace": {"path": str(TRACE)}, "speed": 2e6}}))
    result = CliRunner().invoke(sim_commands.run_command, ["--file", str(manifest)])
    assert isinstance(result.exception, ConfigError)
    assert "spec.speed 2e+06 is above the maximum 1e+06" in str(result.exception)
    assert created == []
