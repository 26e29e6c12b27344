"""The front's command line: loopback ports, sk-cloudprov upstream, a gRPC health check."""

from __future__ import annotations

from pathlib import Path

import pytest

from simkube.env.services.cloudprov_front import NAME, front_spec

pytestmark = pytest.mark.unit


def test_the_front_listens_on_loopback_and_forwards_to_sk_cloudprov() -> None:
    spec = front_spec(binary=Path("/cache/sk-cloudprov-front"), port=7010, metrics_port=7011,
                      upstream="127.0.0.1:7000")
    assert spec.name == NAME
    assert spec.argv == ["/cache/sk-cloudprov-front", "--listen=127.0.0.1:7010",
                         "--upstream=127.0.0.1:7000", "--metrics-listen=127.0.0.1:7011",
                         "--node-key-labels=simkube.dev/node-group,"
                         "simkube.dev/node-group-namespace"]
    assert (spec.port, spec.health_url) == (7010, "grpc://127.0.0.1:7010")
