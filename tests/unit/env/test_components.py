from __future__ import annotations

from pathlib import Path

import pytest

from simkube.env.components import Component, Layout, Ports, control_plane

pytestmark = pytest.mark.unit
PORTS = Ports(etcd_client=1001, etcd_peer=1002, apiserver=1003, controller_manager=1004,
              scheduler=1005, kwok=1006, kwok_watchdog=1007)


@pytest.fixture(autouse=True)
def fake_binaries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("simkube.env.components.binary_path",
                        lambda binary: Path("/bin") / binary.value)


def test_start_order_and_ports() -> None:
    specs = control_plane(Layout(root=Path("/e")), PORTS)
    assert [s.component for s in specs] == list(Component)
    assert [s.port for s in specs] == [1001, 1003, 1004, 1005, 1006, 1007]


def test_an_environment_started_before_the_watchdog_existed_runs_without_it() -> None:
    older = Ports(etcd_client=1001, etcd_peer=1002, apiserver=1003, controller_manager=1004,
                  scheduler=1005, kwok=1006)
    specs = control_plane(Layout(root=Path("/e")), older)
    assert [s.component for s in specs][-1] is Component.KWOK


def test_the_watchdog_uses_kwoks_identity_and_serves_metrics_as_its_health() -> None:
    watchdog = control_plane(Layout(root=Path("/e")), PORTS)[-1]
    assert watchdog.argv[1:3] == ["-m", "simkube.env.kwokwatch"]
    assert "--kubeconfig=/e/kwok.kubeconfig" in watchdog.argv
    assert watchdog.health_url == "http://127.0.0.1:1007/metrics"


def test_every_component_listens_on_loopback_only() -> None:
    for spec in control_plane(Layout(root=Path("/e")), PORTS):
        assert "127.0.0.1" in spec.health_url
        listening = [a for a in spec.argv if a.startswith((
            "--bind-address", "--listen", "--server-address", "--metrics-listen"))]
        assert listening, spec.component
        assert all("127.0.0.1" in a for a in listening), listening
        assert not any("0.0.0.0" in a for a in spec.argv)  # noqa: S104


def test_kwok_manages_only_annotated_nodes_with_our_stages() -> None:
    kwok = control_plane(Layout(root=Path("/e")), PORTS)[-2]
    assert "--manage-all-nodes=false" in kwok.argv
    assert "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake" in kwok.argv
    assert "--config=/e/kwok.yaml" in kwok.argv
