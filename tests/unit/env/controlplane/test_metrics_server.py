from __future__ import annotations

import base64
from pathlib import Path

import pytest
import yaml

from simkube.env.controlplane.components import Layout, Ports
from simkube.env.controlplane.metrics_server import KWOK_METRIC, manifests, metrics_server_spec

pytestmark = pytest.mark.unit
PORTS = Ports(etcd_client=1001, etcd_peer=1002, apiserver=1003, controller_manager=1004,
              scheduler=1005, kwok=1006, metrics_server=1007)


@pytest.fixture(autouse=True)
def fake_binaries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("simkube.env.controlplane.metrics_server.binary_path",
                        lambda binary: Path("/bin") / binary.value)


def test_metrics_server_scrapes_kwok_by_node_name_at_production_timers() -> None:
    spec = metrics_server_spec(Layout(root=Path("/e")), PORTS)
    assert spec.argv[0] == "/bin/metrics-server"
    assert spec.health_url == "https://127.0.0.1:1007/livez"
    for flag in ("--kwok-address=127.0.0.1:1006", "--kubelet-preferred-address-types=Hostname",
                 "--bind-address=127.0.0.1", "--secure-port=1007",
                 "--metric-resolution=15000ms", "--kubelet-request-timeout=10000ms",
                 "--min-window=0ms", "--tls-cert-file=/e/pki/metrics-server-serving.crt",
                 "--kubeconfig=/e/metrics-server.kubeconfig"):
        assert flag in spec.argv, flag


def test_api_service_routes_to_loopback_through_an_external_name_service() -> None:
    (service_path, service), (api_path, api) = manifests(port=1007, ca_bundle=b"PEM")
    assert service_path == "/api/v1/namespaces/kube-system/services/metrics-server"
    assert service["spec"] == {"type": "ExternalName", "externalName": "127.0.0.1",
                               "ports": [{"name": "https", "port": 1007, "protocol": "TCP"}]}
    assert api_path == "/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io"
    assert api["spec"]["service"] == {"namespace": "kube-system", "name": "metrics-server",
                                      "port": 1007}
    assert base64.b64decode(api["spec"]["caBundle"]) == b"PEM"


def test_kwok_metric_serves_what_metrics_server_decodes_per_node() -> None:
    metric = yaml.safe_load(KWOK_METRIC)
    assert metric["kind"] == "Metric"
    assert "{nodeName}" in metric["spec"]["path"]
    names = {m["name"]: m for m in metric["spec"]["metrics"]}
    assert set(names) == {"container_cpu_usage_seconds_total",
                          "container_memory_working_set_bytes",
                          "node_cpu_usage_seconds_total", "node_memory_working_set_bytes",
                          "simkube_kwok_read_at_seconds"}
    # the moment of reading comes right after the container counters (KWOK reads in order)
    order = [m["name"] for m in metric["spec"]["metrics"]]
    assert order.index("simkube_kwok_read_at_seconds") == \
        order.index("container_cpu_usage_seconds_total") + 1
    assert names["simkube_kwok_read_at_seconds"]["dimension"] == "node"
    assert names["container_cpu_usage_seconds_total"]["kind"] == "counter"
    assert {label["name"] for label in names["container_cpu_usage_seconds_total"]["labels"]} \
        == {"container", "namespace", "pod"}
