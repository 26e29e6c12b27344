"""``sk-ctrl serve``: its flags checked before anything connects, then the controller
started with what they say."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from simkube.ctrl import serve_command as serving

pytestmark = pytest.mark.unit


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []

    async def serve(**kwargs: Any) -> None:
        calls.append(kwargs)
    monkeypatch.setattr(serving, "_serve", serve)
    return calls


def invoke(*args: str) -> Any:
    return CliRunner().invoke(serving.serve_command, ["--driver", "127.0.0.1:50051", *args])


def test_the_controller_gets_what_the_flags_say(tmp_path: Path,
                                                served: list[dict[str, Any]]) -> None:
    results = tmp_path / "results" / "deep"
    result = invoke("--results-dir", str(results), "--retry-budget", "5",
                    "--autoscaler-deployment", "kube-system/cluster-autoscaler")
    assert result.exit_code == 0, result.output
    assert results.is_dir()
    (call,) = served
    assert call["results_dir"] == results.resolve()
    assert (call["retry_budget"], call["autoscaler_deployment"], call["env_name"]) == (
        5.0, "kube-system/cluster-autoscaler", None)
    assert call["lease_namespace"] == "simkube-system"


@pytest.mark.parametrize(("args", "complaint"), [
    (["--env", "dev", "--autoscaler-deployment", "a/b"], "not both"),
    (["--autoscaler-deployment", "just-a-name"], "write NAMESPACE/NAME"),
    (["--retry-budget", "-1"], "--retry-budget must be positive"),
])
def test_bad_flags_are_refused(tmp_path: Path, served: list[dict[str, Any]],
                               args: list[str], complaint: str) -> None:
    result = invoke("--results-dir", str(tmp_path), *args)
    assert result.exit_code == 2
    assert complaint in result.output
    assert served == []


def test_a_ca_needs_tls(tmp_path: Path, served: list[dict[str, Any]]) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    result = invoke("--results-dir", str(tmp_path), "--driver-ca", str(ca))
    assert result.exit_code == 2
    assert "--driver-ca needs --driver-tls" in result.output


def test_a_bad_driver_address(tmp_path: Path, served: list[dict[str, Any]]) -> None:
    result = CliRunner().invoke(serving.serve_command, ["--driver", "nowhere",
                                                        "--results-dir", str(tmp_path)])
    assert result.exit_code != 0
    assert served == []


def test_a_results_dir_that_cannot_be_made(tmp_path: Path,
                                           served: list[dict[str, Any]]) -> None:
    (tmp_path / "file").write_text("")
    result = invoke("--results-dir", str(tmp_path / "file" / "results"))
    assert result.exit_code != 0
    assert "cannot be created" in str(result.exception)
    assert served == []
