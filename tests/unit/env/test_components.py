from __future__ import annotations

from pathlib import Path

import pytest

from simkube.env.components import Component, Layout, Ports, control_plane

pytestmark = pytest.mark.unit
PORTS = Ports(etcd_client=1001, etcd_peer=1002, apiserver=1003, controller_manager=1004,
              scheduler=1005, kwok=1006)


@pytest.fixture(autouse=True)
def fake_binaries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("simkube.env.components.binary_path",
                        lambda binary: Path("/bin") / binary.value)


def test_start_order_and_ports() -> None:
    specs = control_plane(Layout(root=Path("/e")), PORTS)
    assert [s.component for s in specs] == list(Component)
    assert [s.port for s in specs] == [1001, 1003, 1004, 1005, 1006]


def test_every_component_listens_on_loopback_only() -> None:
    for spec in control_plane(Layout(root=Path("/e")), PORTS):
        assert "127.0.0.1" in spec.health_url
        listening = [a for a in spec.argv if a.startswith(("--bind-address", "--listen",
                                                           "--server-address"))]
        assert listening, spec.component
        assert all("127.0.0.1" in a for a in listening), listening
        assert not any("0.0.0.0" in a for a in spec.argv)  # noqa: S104


def test_kwok_manages_only_annotated_nodes_with_our_stages() -> None:
    kwok = control_plane(Layout(root=Path("/e")), PORTS)[-1]
    assert "--manage-all-nodes=false" in kwok.argv
    assert "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake" in kwok.argv
    assert "--config=/e/kwok.yaml" in kwok.argv
