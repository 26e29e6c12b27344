"""The demo's "production" workload: a small shop whose traffic rises past capacity and falls.

A script of timed steps applied to a real (local) cluster while sk-tracer records it, so the
trace the demo replays is a genuine recording. The steps tell a shop's day in 76 seconds:
traffic rises to a sale that needs more nodes than the quiet hours, holds, and falls, while a
CronJob keeps firing. The web front end follows the traffic through a HorizontalPodAutoscaler
(CPU at half its request, 2 to 24 replicas): the shop says what web's pods use
(:mod:`demo_traffic`), metrics-server serves it, the HPA scales web. The worker is scaled by
hand. Step times are multiplied by ``stretch`` (the demo records at 0.5, 38 s; the end-to-end
test faster still; not a replay speed, which runs the other way: ``core.simtime``).

A recorded second stands for ``DAY_STRETCH / stretch`` seconds of the day: the demo stretches
the trace by that much (``skctl trace edit --time-stretch``) so the autoscalers' production
timers fit the day, and production's controllers record with their timers divided by as much
(the recording is the day played fast), the HPA's downscale stabilization a minute
(``HPA_TIMERS``; the usual 5 would outlast the evening). Nodes take 70 s to boot (60 s to
register, 10 s to turn Ready) and pods reach them some seconds later (partly wall-clock waits),
so the peak holds 168 s of trace time (with 104 s, a trial on a busy machine left 12 of 30
pods never scheduled). The evening lasts 280 s of trace time: web shrinks a minute or more
after the traffic falls (stabilization, the HPA's sync, metrics-server's scrapes), Karpenter
removes a node about a minute after it turns underused (``consolidateAfter`` 30 s, then its
own checks), and its evictions hold the HPA up: the evicted pods' replacements have no metrics
for two scrapes, and on a scale-down the HPA counts a pod without metrics at its full request.
With a 184 s evening, two replays ended with web still at 6 and 9 replicas instead of 2 (when
a replay's metrics-server still scraped every 15 s of trace; at its 2 s default the end-to-end
test's web was back at 2 with 230 s to spare, so the evening may now be longer than needed).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass

from simkube.core.kubeapi import DEPLOYMENTS, NAMESPACES, KubeClient, merge_patch
from simkube.skctl import demo_shop, demo_traffic
from simkube.skctl.demo_shop import NAMESPACE, WEB

# Trace seconds per recorded second at stretch 1 (module docstring).
DAY_STRETCH = 8.0
# The shop's HPA timers, in the day's time, for production and the replay alike.
HPA_TIMERS = ("controllerManager.horizontal-pod-autoscaler-downscale-stabilization=60s",)


@dataclass(frozen=True, kw_only=True)
class Step:
    at_seconds: float
    traffic: int  # in web pods' worth of CPU (``demo_shop.web_load``)
    replicas: dict[str, int]  # Deployments scaled by hand
    note: str


# web asks 500m CPU per pod, worker 1 CPU. The quiet hours need 2 CPU; the peak (24 web +
# 5 worker = 17 CPU) more than the shipped node groups' minimum (12 CPU: what Cluster
# Autoscaler starts from) and many times what Karpenter starts from (no node at all).
STEPS = (
    Step(at_seconds=0, traffic=2, replicas={"worker": 1}, note="quiet morning"),
    Step(at_seconds=5, traffic=6, replicas={}, note="traffic picks up"),
    Step(at_seconds=10, traffic=14, replicas={"worker": 3}, note="a sale starts"),
    Step(at_seconds=15, traffic=24, replicas={"worker": 5}, note="peak: more pods than nodes"),
    Step(at_seconds=36, traffic=6, replicas={"worker": 2}, note="the sale ends"),
    Step(at_seconds=41, traffic=2, replicas={"worker": 1}, note="evening"),
)
END_SECONDS = 76.0
CLOSING = Step(at_seconds=END_SECONDS, traffic=STEPS[-1].traffic, replicas={},
               note="closing time")


async def _scale(kube: KubeClient, name: str, replicas: int) -> None:
    await merge_patch(kube, DEPLOYMENTS.path(namespace=NAMESPACE, name=name),
                      {"spec": {"replicas": replicas}})


async def run_workload(*, kube: KubeClient, stretch: float = 1.0,
                       on_step: Callable[[Step, int], None] = lambda step, web: None) -> None:
    """Create the shop, play every step at its (scaled) time while the traffic drives web's
    usage, return at ``CLOSING`` (the traffic's usage object removed). ``on_step`` gets each
    step, ``CLOSING`` last, with the number of pods web has then (what its HPA made of the
    traffic so far)."""
    await kube.request("POST", NAMESPACES.path(),
                       body={"apiVersion": "v1", "kind": "Namespace",
                             "metadata": {"name": NAMESPACE}})
    for manifest in demo_shop.opening():
        await demo_shop.apply_object(kube, manifest)
    current, web = [STEPS[0]], [0]

    def seen(share: demo_traffic.Share) -> None:
        web[0] = len(share.pods)

    traffic = asyncio.create_task(demo_traffic.drive(
        kube=kube, namespace=NAMESPACE, app=WEB, seen=seen,
        load_millicores=lambda: demo_shop.web_load(current[0].traffic)))
    try:
        loop = asyncio.get_running_loop()
        started = loop.time()
        for step in (*STEPS, CLOSING):
            await asyncio.sleep(max(0.0, started + step.at_seconds * stretch - loop.time()))
            if traffic.done():  # it stopped on an error: the HPA would read stale usage
                traffic.result()
            current[0] = step
            for name, replicas in step.replicas.items():
                await _scale(kube, name, replicas)
            on_step(step, web[0])
    finally:
        traffic.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await traffic


async def close_shop(*, kube: KubeClient) -> None:
    """Delete the shop's HPA, Deployments and CronJob: the recorded deletions end the trace,
    so the evening (from the last step until ``END_SECONDS``) is replayed too. Not the
    namespace, whose deletion waits for every pod to go: production's cluster is torn down
    next anyway, and its seconds would be stretched into minutes of replayed trace."""
    for resource, name in demo_shop.OBJECTS:
        await kube.request("DELETE", resource.path(namespace=NAMESPACE, name=name))
