"""Karpenter (its KWOK provider, built from the Go module proxy) scaling a real control plane.

Each environment is started by the real ``skctl env up --autoscaler karpenter`` from a small
node-groups file with short provisioning (delay 4 s, ready 2 s later), so every check takes
seconds: pending pods get nodes of the groups' instance types, the nodes go again by
consolidation once the load goes, a NodePool's limit caps the nodes, and a Karpenter killed
mid-scale-up neither loses nor duplicates a node, and a restart dates now a NodeClaim
condition dated ahead of the wall clock. A run at 10x that sk-ctrl holds registers its
nodes at real time, as the run's clock runs then.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from simkube.core.kubeapi import unix_s
from simkube.core.simtime import TimeScale
from simkube.ctrl.autoscaler_loops import LoopCounts, parse_loop_counts
from simkube.env import retiming
from simkube.env.paths import env_dir
from simkube.env.toolchain.catalog import KARPENTER
from simkube.simulation.run_configmap import RUN_CONFIGMAP, RunKey
from tests.conftest import SimEnv, running_env, skctl
from tests.support.gotests import assert_go_tests_pass

pytestmark = pytest.mark.integration


def test_the_wrappers_go_tests_pass() -> None:
    """The project's Karpenter main: its clocks and the pacing of upstream's requeues."""
    assert_go_tests_pass(KARPENTER)

GROUPS = """\
namespace: sk-cloudprov
provisioning: {delay: 4s, readyAfter: 2s}
nodeGroups:
- id: small
  maxSize: 6
  pricePerHour: 0.096
  shape: {cpu: 2, memory: 8Gi, instanceType: m5.large, zone: us-east-1a,
          labels: {simkube.dev/size: small}}
- id: large
  maxSize: 2
  pricePerHour: 0.384
  shape: {cpu: 8, memory: 32Gi, instanceType: m5.2xlarge, zone: us-east-1a,
          labels: {simkube.dev/size: large}}
"""
LIMITED = """\
provisioning: {delay: 2s, readyAfter: 1s}
nodeGroups:
- id: small
  maxSize: 2
  pricePerHour: 0.096
  shape: {cpu: 2, memory: 8Gi, instanceType: m5.large, zone: us-east-1a}
"""


@pytest.fixture(scope="module")
def karpenter_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimEnv]:
    groups = tmp_path_factory.mktemp("karpenter") / "groups.yaml"
    groups.write_text(GROUPS)
    with running_env(variable="SIMKUBE_KARPENTER_TEST_ENV", prefix="karp",
                     up_args=("--autoscaler", "karpenter", "--node-groups", str(groups),
                              "--consolidate-after", "2s")) as env:
        yield env


def kubectl(env: SimEnv, *args: str, stdin: str | None = None) -> str:
    binary = next(Path(os.environ.get("SIMKUBE_CACHE_DIR", Path.home() / ".cache/simkube"),
                       ).glob("bin/kubernetes-*/kubectl"))
    done = subprocess.run([str(binary), f"--kubeconfig={env.kubeconfig}", *args], input=stdin,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def items(env: SimEnv, *args: str) -> list[dict[str, Any]]:
    listed: list[dict[str, Any]] = json.loads(kubectl(env, "get", *args, "-o", "json"))["items"]
    return listed


def deployment(name: str, *, replicas: int, cpu: str, selector: dict[str, str] | None = None,
               ) -> str:
    spec: dict[str, Any] = {
        "tolerations": [{"key": "kwok.x-k8s.io/node", "operator": "Exists",
                         "effect": "NoSchedule"}],
        "containers": [{"name": "c", "image": "fake",
                        "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]}
    if selector:
        spec["nodeSelector"] = selector
    return json.dumps({"apiVersion": "apps/v1", "kind": "Deployment",
                       "metadata": {"name": name, "namespace": "default"},
                       "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                                "template": {"metadata": {"labels": {"app": name}},
                                             "spec": spec}}})


def wait_for(check: Callable[[], bool], *, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"{what} within {timeout:.0f}s"
        time.sleep(0.5)


def running(env: SimEnv, app: str) -> int:
    return sum(1 for pod in items(env, "pods", "-n", "default", "-l", f"app={app}")
               if pod["status"].get("phase") == "Running")


def karpenter_nodes(env: SimEnv) -> list[dict[str, Any]]:
    return [n for n in items(env, "nodes")
            if "karpenter.sh/nodepool" in n["metadata"].get("labels", {})]


def assert_one_node_per_claim(env: SimEnv) -> None:
    claims = {c["status"].get("providerID") for c in items(env, "nodeclaims")
              if not c["metadata"].get("deletionTimestamp")}
    nodes = [n["spec"].get("providerID") for n in karpenter_nodes(env)
             if not n["metadata"].get("deletionTimestamp")]
    assert sorted(nodes) == sorted(claims), (nodes, claims)
    assert len(set(nodes)) == len(nodes)


def test_pending_pods_get_nodes_of_the_groups_then_lose_them_to_consolidation(
        karpenter_env: SimEnv) -> None:
    env = karpenter_env
    kubectl(env, "apply", "-f", "-", stdin=deployment("web", replicas=3, cpu="1500m",
                                                      selector={"simkube.dev/size": "small"}))
    try:
        wait_for(lambda: running(env, "web") == 3, timeout=90, what="3 pods Running")
        nodes = karpenter_nodes(env)
        # 1.5 CPU each on 2-CPU nodes: one small node per pod, labelled like CA's nodes.
        assert len(nodes) == 3
        for node in nodes:
            labels = node["metadata"]["labels"]
            assert labels["simkube.dev/node-group"] == "small"
            assert labels["node.kubernetes.io/instance-type"] == "m5.large"
            assert labels["karpenter.sh/nodepool"] == "simkube"
            assert node["status"]["allocatable"]["cpu"] == "2"
            assert node["status"]["allocatable"]["memory"] == "8Gi"
        assert_one_node_per_claim(env)
    finally:
        kubectl(env, "scale", "deployment/web", "-n", "default", "--replicas=0")
    wait_for(lambda: not karpenter_nodes(env), timeout=150,
             what="consolidation removed every empty node")
    reasons = {e["reason"] for e in items(env, "events", "-A")}
    assert "DisruptionTerminating" in reasons
    kubectl(env, "delete", "deployment/web", "-n", "default")


def test_a_karpenter_killed_mid_scale_up_loses_and_duplicates_no_node(
        karpenter_env: SimEnv) -> None:
    env = karpenter_env
    kubectl(env, "apply", "-f", "-", stdin=deployment("batch", replicas=4, cpu="1500m",
                                                      selector={"simkube.dev/size": "small"}))
    try:
        # Killed while the instances boot (4 s): their provider goroutines die with it.
        wait_for(lambda: len(items(env, "nodeclaims")) >= 4, timeout=60,
                 what="4 NodeClaims launched")
        assert len(karpenter_nodes(env)) < 4
        skctl("env", "restart", "--name", env.name, "--kill", "karpenter")
        wait_for(lambda: running(env, "batch") == 4, timeout=120, what="4 pods Running")
        assert len(karpenter_nodes(env)) == 4
        assert_one_node_per_claim(env)
    finally:
        kubectl(env, "delete", "deployment/batch", "-n", "default")
    wait_for(lambda: not karpenter_nodes(env), timeout=150, what="nodes consolidated away")


def test_a_restart_dates_now_claim_conditions_dated_ahead(karpenter_env: SimEnv) -> None:
    """A paced build's trace clock dates a draining claim's condition ahead of the wall; a
    Karpenter on another clock would wait for that time (karpenter_claim_times.py)."""
    env = karpenter_env
    kubectl(env, "apply", "-f", "-", stdin=deployment("dated", replicas=1, cpu="1500m",
                                                      selector={"simkube.dev/size": "small"}))
    try:
        wait_for(lambda: running(env, "dated") == 1, timeout=60, what="the pod Running")
        [claim] = items(env, "nodeclaims")
        ahead = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 1080))
        conditions = [{**c, "lastTransitionTime": ahead} if c["type"] == "Launched" else c
                      for c in claim["status"]["conditions"]]
        kubectl(env, "patch", "nodeclaim", claim["metadata"]["name"], "--subresource=status",
                "--type=merge", "-p", json.dumps({"status": {"conditions": conditions}}))

        def launched_at() -> float:
            [now] = items(env, "nodeclaims")
            return next(unix_s(c["lastTransitionTime"]) for c in now["status"]["conditions"]
                        if c["type"] == "Launched")
        assert launched_at() > time.time() + 1000
        skctl("env", "restart", "--name", env.name, "karpenter")
        assert launched_at() <= time.time() + 1
    finally:
        kubectl(env, "delete", "deployment/dated", "-n", "default")
    wait_for(lambda: not karpenter_nodes(env), timeout=150, what="nodes consolidated away")


def created_s(obj: dict[str, Any]) -> float:
    return unix_s(obj["metadata"]["creationTimestamp"])


def registration_s(env: SimEnv, app: str) -> float:
    """Seconds from the NodeClaim of ``app``'s one pod to its Node (API timestamps)."""
    wait_for(lambda: running(env, app) == 1, timeout=90, what=f"{app}'s pod Running")
    node_name = items(env, "pods", "-n", "default", "-l", f"app={app}")[0]["spec"]["nodeName"]
    node = next(n for n in karpenter_nodes(env) if n["metadata"]["name"] == node_name)
    claim = next(c for c in items(env, "nodeclaims")
                 if c["status"].get("nodeName") == node_name)
    return created_s(node) - created_s(claim)


def publish_holding(env: SimEnv, holding: str) -> None:
    kubectl(env, "apply", "-f", "-", stdin=json.dumps({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": RUN_CONFIGMAP, "namespace": "sk-cloudprov"},
        "data": {RunKey.HOLDING: holding}}))


def passes(env: SimEnv) -> LoopCounts:
    argv = next(c["argv"] for c in json.loads((env_dir(env.name) / "state.json").read_text(
        ))["components"] if c["name"] == "karpenter")
    port = next(a.partition("=")[2] for a in argv if a.startswith("--metrics-port="))
    return parse_loop_counts(httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text)


def test_a_held_run_registers_nodes_at_real_time(karpenter_env: SimEnv) -> None:
    """At 10x a 4 s registration delay is 0.4 s of wall time; while sk-ctrl holds the run
    (its ConfigMap says so) the build's pace runs at real time and the Node waits 4 s."""
    env = karpenter_env
    retiming.retime(env.name, scale=TimeScale(10), fresh=True,
                    run_configmap=f"sk-cloudprov/{RUN_CONFIGMAP}")
    now_ms = round(time.time() * 1000)
    publish_holding(env, f"{now_ms}-{now_ms + 120_000}")
    try:
        kubectl(env, "apply", "-f", "-", stdin=deployment("held", replicas=1, cpu="1500m",
                                                          selector={"simkube.dev/size": "small"}))
        held = registration_s(env, "held")
        counted = passes(env)
        publish_holding(env, "")
        kubectl(env, "apply", "-f", "-", stdin=deployment("free", replicas=1, cpu="1500m",
                                                          selector={"simkube.dev/size": "small"}))
        free = registration_s(env, "free")
        # Whole-second timestamps: held about 4 s, free about 0.4 s.
        assert held >= 3, f"a held registration took {held} s; want about 4"
        assert free <= 2, f"an unheld registration took {free} s; want about 0.4"
        # The passes the holds wait for are counted: at least the one that launched it.
        assert counted.finished >= 1
        assert counted.started >= counted.finished
    finally:
        for app in ("held", "free"):
            kubectl(env, "delete", f"deployment/{app}", "-n", "default", "--ignore-not-found")
        kubectl(env, "delete", "configmap", RUN_CONFIGMAP, "-n", "sk-cloudprov",
                "--ignore-not-found")
        retiming.restore(env.name)
    wait_for(lambda: not karpenter_nodes(env), timeout=150, what="nodes consolidated away")


def test_a_nodepool_limit_caps_the_nodes(tmp_path: Path) -> None:
    groups = tmp_path / "groups.yaml"
    groups.write_text(LIMITED)
    with running_env(variable="SIMKUBE_KARPENTER_LIMIT_TEST_ENV", prefix="karp-limit",
                     up_args=("--autoscaler", "karpenter", "--node-groups",
                              str(groups))) as env:
        pool = items(env, "nodepools")[0]
        assert pool["spec"]["limits"] == {"nodes": "2", "cpu": "4", "memory": "16Gi"}
        kubectl(env, "apply", "-f", "-", stdin=deployment("wide", replicas=5, cpu="1500m"))
        wait_for(lambda: running(env, "wide") == 2, timeout=60, what="2 pods Running")
        time.sleep(8)  # several provisioning rounds more: the other pods must stay pending
        assert len(karpenter_nodes(env)) == 2
        assert running(env, "wide") == 2
        assert len(items(env, "nodeclaims")) == 2
