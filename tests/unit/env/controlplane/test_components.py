from __future__ import annotations

from pathlib import Path

import pytest

from simkube.env.controlplane.components import Component, Layout, Ports, control_plane

pytestmark = pytest.mark.unit
PORTS = Ports(etcd_client=1001, etcd_peer=1002, apiserver=1003, controller_manager=1004,
              scheduler=1005, kwok=1006)


@pytest.fixture(autouse=True)
def fake_binaries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("simkube.env.controlplane.components.binary_path",
                        lambda binary: Path("/bin") / binary.value)


def test_start_order_and_ports() -> None:
    specs = control_plane(Layout(root=Path("/e")), PORTS)
    # metrics-server starts after these, only when asked for (test_metrics_server.py)
    assert [s.component for s in specs] == [c for c in Component
                                            if c is not Component.METRICS_SERVER]
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


def test_kwok_watches_usage_objects_only_with_metrics_server() -> None:
    plain = control_plane(Layout(root=Path("/e")), PORTS)[-1]
    assert not any(a.startswith("--enable-crds") for a in plain.argv)
    with_metrics = Ports(**{**PORTS.__dict__, "metrics_server": 1007})
    kwok = control_plane(Layout(root=Path("/e")), with_metrics)[-1]
    assert "--enable-crds=ClusterResourceUsage" in kwok.argv


def test_apiserver_has_the_aggregation_layer() -> None:
    apiserver = control_plane(Layout(root=Path("/e")), PORTS)[1]
    assert "--requestheader-client-ca-file=/e/pki/front-proxy-ca.crt" in apiserver.argv
    assert "--requestheader-allowed-names=front-proxy-client" in apiserver.argv
    assert "--proxy-client-cert-file=/e/pki/front-proxy-client.crt" in apiserver.argv
    assert "--proxy-client-key-file=/e/pki/front-proxy-client.key" in apiserver.argv
