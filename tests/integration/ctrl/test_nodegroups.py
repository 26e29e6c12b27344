"""Node groups reset before a run, against a real sk-cloudprov scaling real fake Nodes."""

from __future__ import annotations

from pathlib import Path

import pytest

from simkube.core.kubeapi import KubeClient
from simkube.ctrl import nodegroups
from simkube.gen.clusterautoscaler.cloudprovider.v1.externalgrpc import externalgrpc_pb2 as pb
from tests.conftest import SimEnv
from tests.integration.cloudprov.conftest import Harness, harness  # noqa: F401 - fixture

pytestmark = pytest.mark.integration


async def test_reset_brings_each_group_to_its_min_size(
        harness: Harness, sim_env: SimEnv) -> None:  # noqa: F811
    group = f"g{harness.suffix}"
    groups = [{"id": group, "minSize": 1, "maxSize": 5, "pricePerHour": 0.25,
               "shape": {"cpu": 4, "memory": "16Gi", "instanceType": "sim.large",
                         "zone": "sim-a"}}]
    path = harness.write_config(groups)
    await harness.start(groups)
    await harness.running(group, 1)
    await harness.stub.NodeGroupIncreaseSize(pb.NodeGroupIncreaseSizeRequest(id=group, delta=2))
    await harness.running(group, 3)

    kube = await KubeClient.connect(kubeconfig=Path(sim_env.kubeconfig))
    try:
        config = await nodegroups.load(kube, str(path))
        assert nodegroups.prices(config) == {group: 0.25}
        await nodegroups.reset(kube, config, timeout=90)
        assert await nodegroups.count_nodes(kube, group) == 1
        await harness.running(group, 1)
        with pytest.raises(nodegroups.NodeGroupError, match="cannot read ConfigMap"):
            await nodegroups.load(kube, f"configmap:{harness.namespace}/missing")
    finally:
        await kube.close()
