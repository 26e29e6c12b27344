"""`skctl env up` options: a user's scheduler configuration is what schedules pods, and
`--nodes` with `--node-template` creates Ready fake nodes shaped by the template."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml
from kubernetes_asyncio import client, config

from tests.conftest import skctl
from tests.support.kube import FAKE_TOLERATION, eventually

pytestmark = pytest.mark.integration

SCHEDULER_CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {"schedulerName": "default-scheduler"},
        {"schedulerName": "bin-packer",
         "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
             "type": "MostAllocated",
             "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}}}]},
    ],
}
TEMPLATE = {
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"name": "{name}", "labels": {"node.kubernetes.io/instance-type": "m5.large",
                                               "type": "kwok"}},
    "status": {"capacity": {"cpu": "2", "memory": "8Gi", "pods": "29"},
               "allocatable": {"cpu": "1930m", "memory": "7Gi", "pods": "29"}},
}


@pytest.fixture(scope="module")
def custom_env(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[str]:
    directory = tmp_path_factory.mktemp("custom")
    (directory / "sched.yaml").write_text(yaml.safe_dump(SCHEDULER_CONFIG))
    (directory / "node.yaml").write_text(yaml.safe_dump(TEMPLATE))
    name = f"opts-{os.getpid()}"
    skctl("env", "up", "--name", name, "--nodes", "3",
          "--scheduler-config", str(directory / "sched.yaml"),
          "--node-template", str(directory / "node.yaml"))
    try:
        yield skctl("env", "kubeconfig", "--name", name).stdout.strip()
    finally:
        skctl("env", "down", "--name", name)


async def test_custom_scheduler_profile_schedules_pods_and_template_shapes_nodes(
        custom_env: str) -> None:
    api = await config.new_client_from_config(config_file=custom_env)
    async with api:
        core = client.CoreV1Api(api)
        nodes = (await core.list_node()).items
        assert len(nodes) == 3
        for node in nodes:
            assert node.metadata.labels["node.kubernetes.io/instance-type"] == "m5.large"
            assert node.status.allocatable["cpu"] == "1930m"
            assert {t.key for t in node.spec.taints} == {"kwok.x-k8s.io/node"}
            ready = next(c for c in node.status.conditions if c.type == "Ready")
            assert ready.status == "True"
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "packed"},
               "spec": {"schedulerName": "bin-packer", "tolerations": [FAKE_TOLERATION],
                        "containers": [{"name": "c", "image": "registry.example/c:1"}]}}
        await core.create_namespaced_pod("default", pod)

        async def running() -> client.V1Pod | None:
            current = await core.read_namespaced_pod("packed", "default")
            return current if current.status.phase == "Running" else None

        placed = await eventually(running, timeout=60, what="the bin-packer pod to run")
        assert placed.spec.node_name in {n.metadata.name for n in nodes}
        events = await core.list_namespaced_event(
            "default", field_selector="involvedObject.name=packed,reason=Scheduled")
        assert {e.reporting_component or e.source.component for e in events.items} == {
            "bin-packer"}


def test_env_dir_is_outside_home_kube(custom_env: str) -> None:
    assert Path(custom_env).is_file()
    assert ".kube" not in Path(custom_env).parts
