from __future__ import annotations

import pytest

from simkube.cloudprov.index import ClusterIndex
from simkube.cloudprov.listing import InstanceListing
from simkube.gen.clusterautoscaler.cloudprovider.v1.externalgrpc import externalgrpc_pb2 as pb
from tests.unit.cloudprov.fakes import FakeCluster, make_config

pytestmark = pytest.mark.unit
CONFIG = make_config()


def test_instance_listing_is_rebuilt_only_when_phases_change() -> None:
    cluster = FakeCluster(ClusterIndex(groups=CONFIG.groups))
    state = cluster.index.groups["small"]
    listing = InstanceListing()
    for index in range(300):
        cluster.pod("small", f"p{index}")
    first = listing.response(state)
    assert [i.id for i in first.instances] == [f"simkube://p{index}" for index in range(300)]
    assert listing.response(state) is first
    cluster.node(CONFIG, "small", "p7")
    second = listing.response(state)
    assert second is not first
    states = {i.id: i.status.instanceState for i in second.instances}
    assert states["simkube://p7"] == pb.InstanceStatus.instanceRunning
    assert list(states.values()).count(pb.InstanceStatus.instanceCreating) == 299
