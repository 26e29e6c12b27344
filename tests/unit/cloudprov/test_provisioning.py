"""Provisioning settings, and the reconciler keeping to them: delay, baseline, stockouts."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from simkube.cloudprov.config import CloudConfig
from simkube.cloudprov.current_run import CurrentRun
from simkube.cloudprov.index import ClusterIndex, GroupState, Phase
from simkube.cloudprov.listing import InstanceListing
from simkube.cloudprov.naming import READY_HELD, READY_NOW
from simkube.cloudprov.provisioning import OUT_OF_RESOURCES, Provisioning
from simkube.cloudprov.reconciling import Reconciler
from simkube.core.errors import ConfigError
from simkube.gen.clusterautoscaler.cloudprovider.v1.externalgrpc import externalgrpc_pb2 as pb
from tests.unit.cloudprov.fakes import HELD_AT_HALF, NAMESPACE, FakeCluster, make_config

pytestmark = pytest.mark.unit

TIMED = f"""
namespace: {NAMESPACE}
provisioning: {{delay: 400ms, readyAfter: 2s}}
nodeGroups:
- id: small
  minSize: 1
  maxSize: 5
  shape: {{cpu: 2, memory: 8Gi, instanceType: s2, zone: z1}}
- id: scarce
  maxSize: 5
  shape: {{cpu: 8, memory: 32Gi, instanceType: p3, zone: z2}}
  provisioning: {{delay: 0s, capacity: 1}}
"""


def test_defaults_are_a_minute_to_create_and_ten_seconds_to_ready() -> None:
    config = make_config(TIMED.replace("provisioning: {delay: 400ms, readyAfter: 2s}\n", ""))
    assert config.groups["small"].provisioning == Provisioning(delay=60.0, ready_after=10.0)


def test_groups_inherit_the_top_level_settings_and_override_single_keys() -> None:
    config = make_config(TIMED)
    assert config.groups["small"].provisioning == Provisioning(delay=0.4, ready_after=2.0)
    assert config.groups["scarce"].provisioning == Provisioning(delay=0.0, ready_after=2.0,
                                                                capacity=1)


@pytest.mark.parametrize(("text", "message"), [
    ("provisioning: {delay: soon}", "provisioning.delay: 'soon' is not a duration"),
    ("provisioning: {readyAfter: -5}", "provisioning.readyAfter: -5 is negative"),
    ("provisioning: {capacity: -1}", "provisioning.capacity: must be between 0"),
    ("provisioning: {dealy: 1m}", "unknown field (did you mean 'delay'?)"),
    ("provisioning: 60s", "provisioning: must be a mapping"),
])
def test_bad_settings_are_refused_with_the_field(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")
                       .replace("?", r"\?")):
        make_config(TIMED.replace("provisioning: {delay: 400ms, readyAfter: 2s}", text))


def test_jitter_spreads_a_share_over_the_range() -> None:
    settings = Provisioning(delay=60.0, jitter=30.0)
    assert settings.delay_for(0.0) == 60.0
    assert settings.delay_for(0.5) == 75.0
    assert Provisioning(delay=5.0).delay_for(0.9) == 5.0


def test_capacity_counts_the_nodes_already_there() -> None:
    assert Provisioning(capacity=2).allows(1)
    assert not Provisioning(capacity=2).allows(2)
    assert Provisioning().allows(10_000)


@contextlib.asynccontextmanager
async def reconciling(current: CurrentRun) -> AsyncIterator[tuple[FakeCluster, CloudConfig]]:
    """A reconciler over the TIMED groups (no replicas yet), on ``current``'s run."""
    config = make_config(TIMED)
    cluster = FakeCluster(ClusterIndex(groups=config.groups))
    for group in config.groups:
        cluster.deployment(config, group, 0)
    task = asyncio.create_task(Reconciler(api=cluster, index=cluster.index, config=config,
                                          current=current, retry=0.05).run())
    try:
        yield cluster, config
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def with_baseline(cluster: FakeCluster) -> GroupState:
    """The ``small`` group with its baseline Node there (it comes at once, no delay)."""
    state = cluster.index.groups["small"]
    cluster.pod("small", "base")
    assert await cluster.index.wait_until(lambda: "base" in state.nodes, timeout=0.3)
    return state


@pytest.fixture
async def timed() -> AsyncIterator[tuple[FakeCluster, CloudConfig]]:
    async with reconciling(CurrentRun()) as setup:
        yield setup


async def test_the_baseline_comes_at_once_and_more_waits_for_the_delay(
        timed: tuple[FakeCluster, CloudConfig]) -> None:
    cluster, _ = timed
    state = await with_baseline(cluster)
    started = time.monotonic()
    cluster.pod("small", "extra")
    assert state.phases["extra"] is Phase.CREATING
    assert await cluster.index.wait_until(lambda: "extra" in state.nodes, timeout=3)
    assert time.monotonic() - started >= 0.35


async def test_nodes_register_not_ready_and_only_new_ones_wait_to_be_ready(
        timed: tuple[FakeCluster, CloudConfig]) -> None:
    cluster, _ = timed
    nodes = cluster.index.groups["small"].nodes
    cluster.pod("small", "base")
    assert await cluster.index.wait_until(lambda: "base" in nodes, timeout=1)
    cluster.pod("small", "extra")
    assert await cluster.index.wait_until(lambda: "extra" in nodes, timeout=3)
    base, extra = (cluster.objects[f"/api/v1/nodes/{n}"] for n in ("base", "extra"))
    for node in (base, extra):
        assert {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"} in \
            node["spec"]["taints"]
        ready = node["status"]["conditions"][0]
        assert (ready["type"], ready["status"]) == ("Ready", "False")
    assert "simkube.dev/ready-after" not in base["metadata"]["annotations"]
    # The new one waits for sk-cloudprov: KWOK's own delay would not count the run's clock.
    assert extra["metadata"]["annotations"]["simkube.dev/ready-after"] == READY_HELD
    started = time.monotonic()

    def told() -> bool:
        node = cluster.objects["/api/v1/nodes/extra"]
        return bool(node["metadata"]["annotations"]["simkube.dev/ready-after"] == READY_NOW)
    assert await cluster.index.wait_until(told, timeout=3)
    assert time.monotonic() - started >= 1.8  # readyAfter 2 s from the Node's creation


async def test_instances_beyond_capacity_fail_as_stockouts(
        timed: tuple[FakeCluster, CloudConfig]) -> None:
    cluster, _ = timed
    state = cluster.index.groups["scarce"]
    cluster.pod("scarce", "first")
    cluster.pod("scarce", "second")
    assert await cluster.index.wait_until(
        lambda: state.phases.get("second") is Phase.FAILED and "first" in state.nodes,
        timeout=2)
    await asyncio.sleep(0.1)
    assert set(state.nodes) == {"first"}
    answer = InstanceListing().response(state)
    failed = next(i for i in answer.instances if i.id == "simkube://second")
    assert failed.status.instanceState == pb.InstanceStatus.instanceCreating
    assert failed.status.errorInfo.instanceErrorClass == OUT_OF_RESOURCES
    assert "second" in failed.status.errorInfo.errorMessage
    cluster.remove(f"/api/v1/namespaces/{NAMESPACE}/pods/second")
    assert "second" not in state.failed


@pytest.fixture
async def on_a_run() -> AsyncIterator[tuple[FakeCluster, CurrentRun]]:
    """A run at speed 2: the 400 ms delay is 200 ms of wall time, readyAfter 2 s is 1 s, and a
    held second is half a second of the run's pace."""
    current = CurrentRun(timing=HELD_AT_HALF)
    async with reconciling(current) as (cluster, _):
        yield cluster, current


async def test_time_held_for_the_autoscaler_pushes_a_pending_deadline_back(
        on_a_run: tuple[FakeCluster, CurrentRun]) -> None:
    cluster, current = on_a_run
    state = await with_baseline(cluster)
    started = time.monotonic()
    cluster.pod("small", "extra")
    await asyncio.sleep(0.1)
    began = time.time() - 0.05  # a hold of 0.4 s that began after the request
    current.update(timing=current.timing, holds=((began, began + 0.4),))
    assert await cluster.index.wait_until(lambda: "extra" in state.nodes, timeout=3)
    assert time.monotonic() - started >= 0.38  # the 200 ms delay, plus half the 400 ms held


async def test_a_deadline_in_a_hold_passes_at_real_time(
        on_a_run: tuple[FakeCluster, CurrentRun]) -> None:
    cluster, current = on_a_run
    state = await with_baseline(cluster)
    cluster.pod("small", "extra")
    requested = time.time()
    current.update(timing=current.timing, holding=(requested + 0.1, requested + 60))
    # 0.1 s of the delay was left when the hold began: 0.2 s at half the pace, so the Node
    # comes 0.3 s after the request, during the hold.
    assert not await cluster.index.wait_until(lambda: "extra" in state.nodes, timeout=0.22)
    assert await cluster.index.wait_until(lambda: "extra" in state.nodes, timeout=1)
    assert time.time() - requested >= 0.28
    assert current.holding
    ended = time.time()
    current.update(timing=current.timing, holds=((requested + 0.1, ended),))

    # Readiness (1.2 s from the request) likewise moves back by half the time held.
    def told() -> bool:
        node = cluster.objects["/api/v1/nodes/extra"]
        return bool(node["metadata"]["annotations"]["simkube.dev/ready-after"] == READY_NOW)
    assert await cluster.index.wait_until(told, timeout=3)
    assert time.time() - requested >= 1.2 + (ended - requested - 0.1) / 2 - 0.03


async def test_a_hold_that_never_ends_stops_slowing_nodes_at_its_expiry(
        on_a_run: tuple[FakeCluster, CurrentRun]) -> None:
    cluster, current = on_a_run
    state = await with_baseline(cluster)
    began = time.time()
    current.update(timing=current.timing, holding=(began, began + 0.2))  # sk-ctrl then died
    cluster.pod("small", "extra")
    # 0.2 s at half the pace to the expiry, then 0.1 s at the run's: 0.3 s, no end published
    # (0.4 s were the hold to go on, 0.2 s without it).
    assert await cluster.index.wait_until(lambda: "extra" in state.nodes, timeout=2)
    assert time.time() - began >= 0.28


async def test_an_instance_overdue_when_a_hold_began_comes_during_the_hold(
        on_a_run: tuple[FakeCluster, CurrentRun]) -> None:
    cluster, current = on_a_run
    state = await with_baseline(cluster)
    cluster.pod("small", "extra")
    requested = time.time()
    current.update(timing=current.timing, holding=(requested + 0.1, requested + 60))
    await asyncio.sleep(0.25)  # due at +0.3 s in this hold
    assert "extra" not in state.nodes
    # One ConfigMap update brings the first hold's end and a second hold's start: with 0.02 s
    # held, the 200 ms delay was over (at +0.21 s) before the second hold began (+0.24 s).
    current.update(timing=current.timing, holds=((requested + 0.1, requested + 0.12),),
                   holding=(requested + 0.24, requested + 60))
    assert await cluster.index.wait_until(lambda: "extra" in state.nodes, timeout=0.04)
    assert current.holding  # created with the clock still held


async def test_a_hold_that_ends_early_brings_its_instances_forward(
        on_a_run: tuple[FakeCluster, CurrentRun]) -> None:
    cluster, current = on_a_run
    state = await with_baseline(cluster)
    cluster.pod("small", "extra")
    requested = time.time()
    current.update(timing=current.timing, holding=(requested, requested + 60))  # due at +0.4 s
    await asyncio.sleep(0.1)
    current.update(timing=current.timing, holds=((requested, time.time()),))  # due at +0.25 s
    assert await cluster.index.wait_until(lambda: "extra" in state.nodes, timeout=0.22)


async def test_readiness_counts_from_when_the_node_was_due_not_from_a_late_create(
        on_a_run: tuple[FakeCluster, CurrentRun]) -> None:
    cluster, _ = on_a_run
    await with_baseline(cluster)
    for _ in range(8):  # the first creates fail; the retries come later
        cluster.fail("POST", "/api/v1/nodes")
    requested = time.time()
    cluster.pod("small", "extra")
    nodes = cluster.index.groups["small"].nodes
    assert await cluster.index.wait_until(lambda: "extra" in nodes, timeout=3)
    late = nodes["extra"].created - (requested + 0.2)  # speed 2: the delay is 200 ms

    def told() -> bool:
        node = cluster.objects["/api/v1/nodes/extra"]
        return bool(node["metadata"]["annotations"]["simkube.dev/ready-after"] == READY_NOW)
    assert await cluster.index.wait_until(told, timeout=3)
    readied = time.time()
    assert late >= 0.3  # eight failed creates, 50 ms apart
    assert readied - requested >= 1.15  # 0.2 s delay + 1 s readyAfter ...
    # ... not pushed back by the late create (that would be 1.2 s + late); half of ``late``
    # is the room a loaded machine's wake-ups get
    assert readied - requested < 1.2 + late / 2


class SlowAnswers(FakeCluster):
    """The watch shows a created Node before the create call's answer arrives, as the API
    server's watch often does: the answer comes ``lag`` seconds after the echo."""

    lag = 0.2

    async def request(self, method: str, path: str, *, body: Any = None,
                      query: Any = None, content_type: Any = None) -> dict[str, Any]:
        answer = await super().request(method, path, body=body, query=query,
                                       content_type=content_type)
        if method == "POST" and path == "/api/v1/nodes":
            await asyncio.sleep(self.lag)
        return answer


async def test_a_baseline_instance_whose_sibling_is_being_answered_comes_at_once() -> None:
    """minSize 2: the second baseline instance must not be taken for a scale-up because the
    first one's Node is in the index while its create call is still in flight (it waited a
    provisioning delay, a minute after `env up`, and a Simulation started then waited for
    its node-group reset)."""
    config = make_config(TIMED.replace("minSize: 1", "minSize: 2"))
    cluster = SlowAnswers(ClusterIndex(groups=config.groups))
    cluster.deployment(config, "small", 0)
    cluster.deployment(config, "scarce", 0)
    task = asyncio.create_task(Reconciler(api=cluster, index=cluster.index, config=config,
                                          current=CurrentRun(), retry=0.05).run())
    try:
        nodes = cluster.index.groups["small"].nodes
        cluster.pod("small", "first")
        assert await cluster.index.wait_until(lambda: "first" in nodes, timeout=0.3)
        started = time.monotonic()
        cluster.pod("small", "second")  # while the first Node's create is being answered
        assert await cluster.index.wait_until(lambda: "second" in nodes, timeout=1)
        assert time.monotonic() - started < 0.3  # not the 400 ms delay
        assert "simkube.dev/ready-after" not in \
            cluster.objects["/api/v1/nodes/second"]["metadata"]["annotations"]
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_a_node_seen_before_its_create_is_answered_still_gets_ready() -> None:
    """The watch's echo of a new Node came while its create call was in flight, so its
    check was skipped; it is looked at again once the call is answered, which schedules its
    readiness (else only the next resync, 30 s of wall time, would)."""
    config = make_config(TIMED.replace("{delay: 400ms, readyAfter: 2s}",
                                       "{delay: 0s, readyAfter: 300ms}"))
    cluster = SlowAnswers(ClusterIndex(groups=config.groups))
    for group in config.groups:
        cluster.deployment(config, group, 0)
    task = asyncio.create_task(Reconciler(api=cluster, index=cluster.index, config=config,
                                          current=CurrentRun(), retry=0.05).run())
    try:
        await with_baseline(cluster)
        cluster.pod("small", "extra")

        def told() -> bool:
            node = cluster.objects.get("/api/v1/nodes/extra")
            return node is not None and node["metadata"]["annotations"].get(
                "simkube.dev/ready-after") == READY_NOW
        assert await cluster.index.wait_until(told, timeout=2)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
