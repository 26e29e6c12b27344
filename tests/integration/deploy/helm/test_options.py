"""What the chart's options render: TLS wiring on both ends of each connection,
Simulations completed by their defaults, Karpenter in place of Cluster Autoscaler.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tests.integration.deploy.helm.chart import CHART, Helm
from tests.integration.deploy.manifests import containers, find

pytestmark = pytest.mark.integration
EXAMPLES = CHART / "examples"


def _container(objects: list[dict[str, Any]], name: str) -> dict[str, Any]:
    (found,) = [c for d, c in containers(objects) if d["metadata"]["name"] == name]
    return found


def _secret_of(objects: list[dict[str, Any]], name: str) -> str:
    deployment = find(objects, "Deployment", name, "simkube-system")
    (volume,) = [v for v in deployment["spec"]["template"]["spec"]["volumes"]
                 if v["name"] == "tls"]
    return str(volume["secret"]["secretName"])


def test_cert_manager_tls_wires_both_ends(helm: Helm) -> None:
    objects = helm.template(EXAMPLES / "cert-manager.yaml", sets=("tracer.enabled=true",))
    certificates = {o["metadata"]["name"]: o["spec"] for o in objects
                    if o["kind"] == "Certificate"}
    assert certificates["simkube-ca"]["isCA"] is True
    for server in ("sk-driver", "sk-cloudprov", "sk-tracer"):
        args = _container(objects, server)["args"]
        assert "--tls-cert=/etc/simkube/tls/tls.crt" in args
        assert certificates[server]["secretName"] == _secret_of(objects, server)
        assert f"{server}.simkube-system.svc" in certificates[server]["dnsNames"]
        assert certificates[server]["issuerRef"]["name"] == "simkube-ca"
        probe = _container(objects, server)["readinessProbe"]
        assert "tcpSocket" in probe  # the kubelet's gRPC probe speaks no TLS
        assert "grpc" not in probe
    # Mutual TLS where the client can present a certificate; sk-ctrl cannot.
    client_ca = "--tls-client-ca=/etc/simkube/tls/ca.crt"
    assert client_ca in _container(objects, "sk-cloudprov")["args"]
    assert client_ca in _container(objects, "sk-tracer")["args"]
    assert not any(a.startswith("--tls-client-ca")
                   for a in _container(objects, "sk-driver")["args"])
    assert {"--driver-tls", "--driver-ca=/etc/simkube/tls/ca.crt"} <= set(
        _container(objects, "sk-ctrl")["args"])
    cloud = yaml.safe_load(find(objects, "ConfigMap", "cluster-autoscaler-cloud-config",
                                "simkube-system")["data"]["cloud-config.yaml"])
    assert cloud == {"address": "sk-cloudprov.simkube-system.svc:50053", "grpc_timeout": "10s",
                     "cacert": "/etc/ca/tls/ca.crt", "cert": "/etc/ca/tls/tls.crt",
                     "key": "/etc/ca/tls/tls.key"}
    assert certificates["cluster-autoscaler"]["usages"] == ["client auth"]
    assert certificates["cluster-autoscaler"]["secretName"] == _secret_of(
        objects, "cluster-autoscaler")


def test_given_secrets_make_no_certificates(helm: Helm) -> None:
    objects = helm.template(EXAMPLES / "tls-secrets.yaml")
    assert not [o for o in objects if o["apiVersion"].startswith("cert-manager.io/")]
    assert _secret_of(objects, "sk-driver") == "simkube-driver-cert"
    assert _secret_of(objects, "sk-ctrl") == "simkube-ctrl-ca"
    assert not any(a.startswith("--tls-client-ca")
                   for a in _container(objects, "sk-cloudprov")["args"])  # mutual: false


def test_simulations_take_the_defaults_field_by_field(helm: Helm) -> None:
    objects = helm.template(EXAMPLES / "simulations.yaml", include_crds=False)
    specs = {o["metadata"]["name"]: o["spec"] for o in objects if o["kind"] == "Simulation"}
    assert specs["first"] == {"speed": 10, "repetitions": 1, "namespacePrefix": "virtual",
                              "trace": {"path": "/traces/trace.sktrace"},
                              "clock": {"holdForAutoscaler": True, "maxHold": "2s"}}
    assert specs["repeated"]["repetitions"] == 3
    assert specs["repeated"]["clock"] == {"holdForAutoscaler": False}


def test_karpenter_replaces_the_cluster_autoscaler(helm: Helm) -> None:
    objects = helm.template(EXAMPLES / "karpenter.yaml", include_crds=False)
    deployments = {o["metadata"]["name"] for o in objects if o["kind"] == "Deployment"}
    assert deployments == {"sk-driver", "sk-ctrl", "kwok-controller", "karpenter"}
    args = _container(objects, "sk-ctrl")["args"]
    assert not any(a.startswith(("--autoscaler-", "--node-groups")) for a in args)
    assert "--instance-types-file-path=/etc/karpenter/instance-types.json" in _container(
        objects, "karpenter")["args"]
    assert {o["kind"] for o in objects} >= {"NodePool", "KWOKNodeClass"}


def test_karpenter_needs_an_image(helm: Helm) -> None:
    result = helm.run("template", CHART, "--set", "karpenter.enabled=true")
    assert result.returncode != 0
    assert "/karpenter/image/repository" in result.stderr, result.stderr
