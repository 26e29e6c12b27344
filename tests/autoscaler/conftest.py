"""The autoscaler tier: the real Cluster Autoscaler against sk-cloudprov and KWOK.

Every test here starts its own environment with ``skctl env up --autoscaler`` (the node
groups and CA flags it needs), so CA's state never leaks between cases. The CA binary comes
from where a user has it (``$SIMKUBE_CLUSTER_AUTOSCALER`` or the binary cache); without one
the tier fails with that message — it never skips. ``make test-autoscaler`` runs it.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes_asyncio import client, config

from simkube.core.errors import EnvironmentStateError
from simkube.env.autoscalers.cluster_autoscaler import resolve
from tests.conftest import skctl
from tests.support.kube import FAKE_TOLERATION

GROUP_LABEL = "simkube.dev/node-group"
PLAN = re.compile(r"Final scale-up plan: (.*)")
# Fast enough for a test, slow enough that instances are really "being created" for a while.
FAST_PROVISIONING = {"delay": "5s", "readyAfter": "2s"}
FAST_SCALE_DOWN = ("--autoscaler-flag=--scale-down-delay-after-add=10s",
                   "--autoscaler-flag=--scale-down-unneeded-time=10s",
                   "--autoscaler-flag=--unremovable-node-recheck-timeout=5s")


@pytest.fixture(scope="session")
def ca_binary() -> Path:
    try:
        return resolve(None).path
    except EnvironmentStateError as exc:
        pytest.fail(f"the autoscaler tier needs a Cluster Autoscaler binary: {exc}\n{exc.hint}",
                    pytrace=False)


def group(group_id: str, *, cpu: int, price: float, min_size: int = 0, max_size: int = 10,
          provisioning: dict[str, Any] | None = None, **labels: str) -> dict[str, Any]:
    """A node group entry of sk-cloudprov's config; CA's flags set its options."""
    return {"id": group_id, "minSize": min_size, "maxSize": max_size, "pricePerHour": price,
            "shape": {"cpu": cpu, "memory": f"{cpu * 4}Gi", "instanceType": f"sim.{group_id}",
                      "zone": "sim-a", "labels": labels},
            "provisioning": {**FAST_PROVISIONING, **(provisioning or {})}}


@dataclass
class CaEnv:
    """A running environment with CA; logs are read from an offset to see one episode."""

    name: str
    kubeconfig: str
    logs: dict[str, Path]
    api: client.ApiClient | None = None
    marks: dict[str, int] = field(default_factory=dict)

    def mark(self) -> None:
        self.marks = {name: path.stat().st_size for name, path in self.logs.items()}

    def log_since_mark(self, component: str) -> str:
        with self.logs[component].open("rb") as handle:
            handle.seek(self.marks.get(component, 0))
            return handle.read().decode(errors="replace")

    def plans(self) -> list[str]:
        """CA's scale-up plans since the mark, as it logs them."""
        return PLAN.findall(self.log_since_mark("cluster-autoscaler"))

    def deletions(self) -> list[str]:
        """Every node sk-cloudprov was asked to delete (NodeGroupDeleteNodes) since the mark."""
        names: list[str] = []
        for line in self.log_since_mark("sk-cloudprov").splitlines():
            if '"nodes deleted"' in line:
                names += json.loads(line[line.index("{"):])["nodes"]
        return names

    def restart(self, component: str) -> None:
        skctl("env", "restart", "--name", self.name, component, "--kill")


def start_env(tmp: Path, name: str, groups: list[dict[str, Any]], *flags: str) -> CaEnv:
    path = tmp / "groups.yaml"
    path.write_text(yaml.safe_dump({"nodeGroups": groups}))
    skctl("env", "up", "--name", name, "--autoscaler", "--node-groups", str(path), *flags,
          timeout=300)
    status = json.loads(skctl("env", "status", "--name", name, "--json").stdout)
    logs = {c["name"]: Path(c["log"]) for c in status["components"]}
    return CaEnv(name=name, kubeconfig=status["kubeconfig"], logs=logs)


@pytest.fixture
def make_env(ca_binary: Path, tmp_path: Path,
             monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setenv("SIMKUBE_CLUSTER_AUTOSCALER", str(ca_binary))
    started: list[CaEnv] = []

    def make(groups: list[dict[str, Any]], *flags: str) -> CaEnv:
        env = start_env(tmp_path, f"ca-{os.getpid()}-{len(started)}", groups, *flags)
        started.append(env)
        return env
    yield make
    for env in started:
        # ``env down`` deletes the logs; a failed run is diagnosed from this copy
        # (pytest keeps the temporary directories of the last three sessions).
        kept = tmp_path / f"logs-{env.name}"
        kept.mkdir(exist_ok=True)
        for component, log in env.logs.items():
            if log.is_file():
                shutil.copyfile(log, kept / f"{component}.log")
        skctl("env", "down", "--name", env.name, check=False)


async def connect(env: CaEnv) -> client.ApiClient:
    env.api = await config.new_client_from_config(config_file=env.kubeconfig)
    return env.api


def workload(name: str, *, replicas: int, cpu: str = "1",
             selector: dict[str, str]) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "default", "labels": labels},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": {
                         "containers": [{"name": "app", "image": "registry.example/app:1",
                                         "resources": {"requests": {"cpu": cpu,
                                                                    "memory": "64Mi"}}}],
                         "tolerations": [FAKE_TOLERATION], "nodeSelector": selector,
                         "terminationGracePeriodSeconds": 0}}}}


class Sampler:
    """Samples group node counts every 0.2 s in the background; keeps each group's peak.
    ``selector`` narrows it to some groups (listing 1,000 nodes five times a second would
    load the machine the test measures)."""

    def __init__(self, api: client.ApiClient, *, selector: str = GROUP_LABEL) -> None:
        self._core = client.CoreV1Api(api)
        self._selector = selector
        self.peak: dict[str, int] = {}
        self.now: dict[str, int] = {}
        self.seen: set[str] = set()  # every group node that existed while sampling
        self._task: asyncio.Task[None] | None = None

    async def counts(self) -> dict[str, int]:
        nodes = await self._core.list_node(label_selector=self._selector)
        counts: dict[str, int] = {}
        for node in nodes.items:
            self.seen.add(node.metadata.name)
            if node.metadata.deletion_timestamp is None:
                key = node.metadata.labels[GROUP_LABEL]
                counts[key] = counts.get(key, 0) + 1
        return counts

    async def _run(self) -> None:
        while True:
            self.now = await self.counts()
            for key, count in self.now.items():
                self.peak[key] = max(self.peak.get(key, 0), count)
            await asyncio.sleep(0.2)

    def start(self) -> None:
        self.peak, self.seen = {}, set()
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
