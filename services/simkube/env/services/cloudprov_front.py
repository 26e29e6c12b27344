"""sk-cloudprov-front in a local environment: the native server between CA and sk-cloudprov.

Cluster Autoscaler's externalgrpc client makes about three serial calls per node in every
loop, and a round trip through Python's gRPC costs several times a native one, so at 1,000
nodes the round trips were most of CA's loop (docs/benchmarks.md). ``env up --autoscaler``
therefore points CA's cloud-config at this front (toolchain/cloudprov-front, Go), which
answers the calls whose answers depend only on sk-cloudprov's configuration from a cache and
forwards everything else to sk-cloudprov; ``--no-cloudprov-front`` points CA at sk-cloudprov
itself. The front is a supervised component like the others: ``env status`` shows its
health, ``env restart sk-cloudprov-front`` restarts it.
"""

from __future__ import annotations

from pathlib import Path

from simkube.cloudprov.naming import GROUP_LABEL, OWNER_LABEL
from simkube.env import grpcprobe
from simkube.env.services.commands import ServiceSpec, address

NAME = "sk-cloudprov-front"
ADDRESS_KEY = "cloudprov_front"  # its gRPC address in ``env status --json``


def front_spec(*, binary: Path, port: int, metrics_port: int, upstream: str) -> ServiceSpec:
    """The front listening on ``port`` (/metrics on ``metrics_port``), forwarding to
    ``upstream`` (sk-cloudprov's host:port); healthy when its gRPC health check serves.

    sk-cloudprov maps a node to its group by providerID, name and these two labels alone
    (``CloudProviderServicer.group_of_node``), so the front keys NodeGroupForNode by them and
    a Node's changing annotations do not defeat its cache."""
    return ServiceSpec(name=NAME, port=port, health_url=grpcprobe.health_url(address(port)),
                       argv=[str(binary), f"--listen={address(port)}", f"--upstream={upstream}",
                             f"--metrics-listen={address(metrics_port)}",
                             f"--node-key-labels={GROUP_LABEL},{OWNER_LABEL}"])
