from __future__ import annotations

from pathlib import Path

import pytest

from simkube.core.errors import EnvironmentStateError
from simkube.env.autoscalers.karpenter import karpenter_spec, merge_flags
from simkube.env.controlplane.components import Layout

pytestmark = pytest.mark.unit


def test_karpenter_flags_replace_defaults_and_wiring_is_refused() -> None:
    flags = merge_flags(("--batch-max-duration=20s",))
    assert "--batch-max-duration=20s" in flags
    assert "--batch-max-duration=10s" not in flags
    with pytest.raises(EnvironmentStateError, match="wires Karpenter to this environment"):
        merge_flags(("--metrics-port=1",))
    with pytest.raises(EnvironmentStateError, match="is not of the form --name=value"):
        merge_flags(("batch",))


def test_the_command_line_wires_karpenter_to_the_environment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("simkube.env.autoscalers.karpenter.binary_path",
                        lambda _b: Path("/bin/karp"))
    layout = Layout(root=tmp_path)
    spec = karpenter_spec(layout=layout, health_port=8081, metrics_port=8080)
    # Its flag set has no --kubeconfig: the environment's admin comes through KUBECONFIG,
    # kept in the argv so that a supervisor restart keeps it too.
    assert spec.argv[1:3] == [f"KUBECONFIG={layout.admin_kubeconfig}", "/bin/karp"]
    assert "--disable-leader-election" in spec.argv
    assert "--health-probe-port=8081" in spec.argv
    assert spec.health_url == "http://127.0.0.1:8081/readyz"
