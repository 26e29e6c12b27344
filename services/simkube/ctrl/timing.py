"""Each run's timers put in place before it starts, recorded, and put back when the Simulation ends.

A run at speed *s* is faithful only when every timer of the simulated cluster runs *s* times
faster together (``core.simtime``). sk-ctrl does three things per run:
- publishes the run's speed and seed in a ConfigMap, which sk-cloudprov's provisioning delays
  and per-group option durations follow;
- restarts the components that read their timers at start through a ``TimerTarget``: the
  local environment's supervisor (``--env``: CA or Karpenter with its NodePools, scheduler,
  controller-manager) or, in a cluster, Cluster Autoscaler's Deployment
  (``--autoscaler-deployment``: its args patched); the target also says which timers its own
  set-up chose (Karpenter's consolidateAfter from ``env up``), used where a Simulation sets
  none;
- returns the plan, whose values (asked, given, effective) and floor warnings go into the
  Simulation's status and the run's results.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from simkube.cloudprov.config import CloudConfig
from simkube.core.flags import with_flags
from simkube.core.kubeapi import (
    CONFIG_MAPS,
    DEPLOYMENTS,
    MERGE_PATCH,
    NAMESPACES,
    ApiError,
    KubeClient,
    poll,
)
from simkube.core.logs import get_logger
from simkube.core.replay_flags import run_flags
from simkube.core.replay_flags import skips_age_wait as flags_skip_age_wait
from simkube.core.simtime import REAL_TIME, TimerPlan, TimerSettings, TimeScale, plan
from simkube.core.timers import BY_KEY, SCAN_INTERVAL, Component, Timer, replay_defaults
from simkube.env import retiming
from simkube.simulation.run_configmap import RUN_CONFIGMAP, RunTiming, timescale_data

if TYPE_CHECKING:
    from simkube.simulation.spec import SimulationSpec

log = get_logger(__name__)
NOT_APPLIED = ("not applied: sk-ctrl was started without --env or --autoscaler-deployment, "
               "so only sk-cloudprov's provisioning delays follow the speed")
BASE_ARGS_ANNOTATION = "simkube.dev/base-args"
RUN_ANNOTATION = "simkube.dev/run"
ROLLOUT_TIMEOUT = 180.0
MAX_NODE_PROVISION_TIME = BY_KEY[f"{Component.CLUSTER_AUTOSCALER.value}.max-node-provision-time"]
SCALE_DOWN_UNNEEDED = f"{Component.CLUSTER_AUTOSCALER.value}.scale-down-unneeded-time"
DELETE_DELAY_AFTER_TAINT = f"{Component.CLUSTER_AUTOSCALER.value}.node-delete-delay-after-taint"


class TimerTarget(Protocol):
    description: str

    async def environment_timers(self) -> dict[str, int]:
        """Timers the target's own set-up chose (trace time), for the catalogue's
        ``from_environment`` ones a Simulation leaves unset."""

    async def apply(self, *, scale: TimeScale, settings: TimerSettings, run: str,
                    run_configmap: str = "", gated: bool = False) -> None:
        """Timers for run ``run``; the autoscaler starts afresh for every run.
        ``run_configmap`` ("namespace/name") is where the run's holds are published;
        ``gated``: sk-ctrl gates the run's scale-up (``core.replay_flags.run_flags``)."""

    async def skips_age_wait(self, *, scale: TimeScale) -> bool:
        """Whether Cluster Autoscaler is started without production's pod-age wait for a run
        at ``scale`` (``core.replay_flags``)."""

    async def restore(self) -> None: ...


class LocalEnvironment:
    """The local environment's supervisor restarts the autoscaler (CA or Karpenter, whose
    NodePools follow too), the scheduler and the controller-manager."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.description = self._describe("the autoscaler")

    def _describe(self, autoscaler: str) -> str:
        return (f"local environment {self.name!r} ({autoscaler}, kube-scheduler, "
                "kube-controller-manager restarted with them)")

    async def environment_timers(self) -> dict[str, int]:
        return await asyncio.to_thread(retiming.environment_timers, self.name)

    async def skips_age_wait(self, *, scale: TimeScale) -> bool:
        return await asyncio.to_thread(retiming.skips_age_wait, self.name, scale=scale)

    async def apply(self, *, scale: TimeScale, settings: TimerSettings, run: str,
                    run_configmap: str = "", gated: bool = False) -> None:
        # Not at construction: sk-ctrl starts inside 'env up', which holds the state's lock.
        autoscaler = await asyncio.to_thread(retiming.autoscaler_of, self.name)
        self.description = self._describe(autoscaler or "no autoscaler")
        await asyncio.to_thread(retiming.retime, self.name, scale=scale, settings=settings,
                                fresh=True, run_configmap=run_configmap, gated=gated)

    async def restore(self) -> None:
        await asyncio.to_thread(retiming.restore, self.name)


class AutoscalerDeployment:
    """Cluster Autoscaler as a Deployment: its container's args patched, rollout awaited.

    The scheduler and controller-manager of a real cluster are not sk-ctrl's to restart; the
    status says so (``description``)."""

    def __init__(self, *, kube: KubeClient, namespace: str, name: str) -> None:
        self.kube, self.path = kube, DEPLOYMENTS.path(namespace=namespace, name=name)
        self.description = (f"Deployment {namespace}/{name} (Cluster Autoscaler only; the "
                            "cluster's scheduler and controller-manager keep their timers)")

    async def environment_timers(self) -> dict[str, int]:
        return {}  # CA's own args are replaced by the run's, as in a local environment

    async def apply(self, *, scale: TimeScale, settings: TimerSettings, run: str,
                    run_configmap: str = "", gated: bool = False) -> None:
        scaled = plan(scale=scale, settings=settings)
        await self._set(lambda base: with_flags(
            base, flags=run_flags(plan=scaled, argv=base, gated=gated)), run=run)

    async def restore(self) -> None:
        await self._set(None, run=None)

    async def skips_age_wait(self, *, scale: TimeScale) -> bool:
        return flags_skip_age_wait(scale=scale, argv=await self._base_args())

    async def _base_args(self) -> list[str]:
        """CA's args as the Deployment had them before any run changed them."""
        found = await self.kube.request("GET", self.path)
        annotations = found["metadata"].get("annotations") or {}
        container = found["spec"]["template"]["spec"]["containers"][0]
        return (json.loads(annotations[BASE_ARGS_ANNOTATION])
                if BASE_ARGS_ANNOTATION in annotations else list(container.get("args") or []))

    async def _set(self, change: Any, *, run: str | None) -> None:
        base = await self._base_args()
        found = await self.kube.request("GET", self.path)
        container = found["spec"]["template"]["spec"]["containers"][0]
        args = base if change is None else change(base)
        kept = None if change is None else json.dumps(base)
        containers = [{**container, "args": args}]
        # The run's name on the pod template rolls CA out afresh for every run, even when
        # its args stay the same (a second repetition).
        await self.kube.request("PATCH", self.path, content_type=MERGE_PATCH, body={
            "metadata": {"annotations": {BASE_ARGS_ANNOTATION: kept}},
            "spec": {"template": {"metadata": {"annotations": {RUN_ANNOTATION: run}},
                                  "spec": {"containers": containers}}}})

        async def rolled_out() -> bool:
            now = await self.kube.request("GET", self.path)
            status, wanted = now.get("status") or {}, now["spec"].get("replicas", 1)
            return bool(status.get("observedGeneration", 0) >= now["metadata"]["generation"]
                        and status.get("updatedReplicas", 0) == wanted
                        and status.get("availableReplicas", 0) == wanted)
        if not await poll(rolled_out, timeout=ROLLOUT_TIMEOUT, interval=1.0):
            raise ApiError(code=0, reason="RolloutTimeout",
                           message=f"{self.path} did not roll out within {ROLLOUT_TIMEOUT:.0f}s")


def provisioning_timers(config: CloudConfig | None) -> list[tuple[Timer, int]]:
    """Each group's provisioning durations (trace time), to show next to the catalogue's."""
    if config is None:
        return []
    timers: list[tuple[Timer, int]] = []
    for group in config.groups.values():
        for name, seconds in (("delay", group.provisioning.delay),
                              ("readyAfter", group.provisioning.ready_after),
                              ("jitter", group.provisioning.jitter)):
            timer = Timer(component=Component.CLOUDPROV, name=f"{group.id}.{name}",
                          default_ms=round(seconds * 1000))
            timers.append((timer, timer.default_ms))
    return timers


def run_timing(*, spec: SimulationSpec, run: str, scaled: TimerPlan) -> RunTiming:
    """What sk-cloudprov reads of run ``run``: its speed and seed, and the two CA timers that
    say when CA deletes a node it found unneeded, in trace time as the run gives them."""
    effective = {t.timer.key: t.effective_ms / 1000 for t in scaled.timers}
    return RunTiming(scale=spec.scale, seed=spec.seed, run=run,
                     scale_down_unneeded_s=effective.get(SCALE_DOWN_UNNEEDED),
                     delete_delay_after_taint_s=effective.get(DELETE_DELAY_AFTER_TAINT))


async def publish(kube: KubeClient, *, namespace: str, timing: RunTiming) -> None:
    """The run's speed and seed where sk-cloudprov reads them."""
    body = {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": RUN_CONFIGMAP, "namespace": namespace,
                         "labels": {"app.kubernetes.io/part-of": "simkube"}},
            "data": timescale_data(timing=timing)}
    if not await kube.exists(NAMESPACES.path(name=namespace)):
        # Neither sk-cloudprov nor Karpenter set up here: nobody reads the speed there.
        log.info("no node-groups namespace; the run's timescale is not published",
                 namespace=namespace)
        return
    try:
        await kube.request("PUT", CONFIG_MAPS.path(namespace=namespace, name=RUN_CONFIGMAP),
                           body=body)
    except ApiError as exc:
        if exc.code != 404:
            raise
        await kube.request("POST", CONFIG_MAPS.path(namespace=namespace), body=body)


async def withdraw(kube: KubeClient, *, namespace: str) -> None:
    try:
        await kube.request("DELETE", CONFIG_MAPS.path(namespace=namespace, name=RUN_CONFIGMAP))
    except ApiError as exc:
        if exc.code != 404:
            raise


@dataclass(frozen=True, kw_only=True)
class RunTimers:
    plan: TimerPlan
    status: dict[str, Any]
    warnings: tuple[str, ...]
    gates_scale_up: bool = False  # pods carry CA's scale-up gate (``scale_up_gate.py``)


def scan_interval_s(spec: SimulationSpec) -> float:
    """CA's scan interval in trace seconds: the Simulation's, else the replay's default (an
    environment's own is not looked up: this paces the scale-up gate and bounds a hold)."""
    return spec.timers.with_defaults(replay_defaults()).trace_ms(SCAN_INTERVAL) / 1000


def provision_time_s(spec: SimulationSpec) -> float:
    """CA's max-node-provision-time in trace seconds, as ``scan_interval_s`` reads it: by then
    a node CA bought has come or been given up (it bounds the gate's re-gating)."""
    return spec.timers.with_defaults(replay_defaults()).trace_ms(MAX_NODE_PROVISION_TIME) / 1000


def loop_wait_s(spec: SimulationSpec) -> float:
    """Wall seconds a replay's CA may take to start a loop: two of its scan intervals, as it
    loops on its scan alone (``core/replay_flags.py``, ``ctrl/autoscaler_loops.py``); a
    gated run's CA scans more often than that, so the bound is generous there."""
    return 2 * spec.scale.to_wall(scan_interval_s(spec))


async def prepare_timers(kube: KubeClient, *, target: TimerTarget | None,
                         spec: SimulationSpec, config: CloudConfig | None,
                         run: str, holding: bool = False) -> RunTimers:
    """Everything timed for run ``run`` of ``spec`` at its speed; what it became, recorded.
    A ``holding`` run whose CA bypasses the pod-age wait gates its pods' scale-up instead
    (``scale_up_gate.py``)."""
    # The environment's own values where the Simulation sets none, so the status shows what
    # the run really gets (Karpenter's consolidateAfter from env up), then a replay's own
    # defaults (metrics-server's resolution).
    own = await target.environment_timers() if target is not None else {}
    settings = spec.timers.with_defaults({**replay_defaults(), **own})
    scaled = plan(scale=spec.scale, settings=settings, extra=provisioning_timers(config))
    gates = holding and target is not None and await target.skips_age_wait(scale=spec.scale)
    if config is not None:
        await publish(kube, namespace=config.namespace,
                      timing=run_timing(spec=spec, run=run, scaled=scaled))
    if target is not None:
        await target.apply(scale=spec.scale, settings=settings, run=run, run_configmap=(
            f"{config.namespace}/{RUN_CONFIGMAP}" if config is not None else ""), gated=gates)
    applied = target.description if target else NOT_APPLIED
    warnings = tuple(timer.describe() for timer in scaled.distorted())
    if target is None and spec.scale != REAL_TIME:
        warnings += (f"at speed {spec.scale.speed:g} the autoscaler, scheduler and "
                     f"controller-manager run on their own timers: {NOT_APPLIED}",)
    status = {"appliedTo": applied, "warnings": list(warnings),
              "values": [timer.to_status() for timer in scaled.timers]}
    log.info("run timers", run=run, speed=spec.scale.speed, applied_to=applied,
             floored=[t.timer.key for t in scaled.floored()])
    return RunTimers(plan=scaled, status=status, warnings=warnings, gates_scale_up=gates)


async def restore_timers(kube: KubeClient, *, target: TimerTarget | None,
                         config: CloudConfig | None) -> None:
    """Back to the environment's own timers once a Simulation ends, however it ends."""
    if config is not None:
        await withdraw(kube, namespace=config.namespace)
    if target is not None:
        await target.restore()
