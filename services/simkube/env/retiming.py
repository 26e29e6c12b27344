"""A local environment's timers set for one Simulation run, and put back after it.

Cluster Autoscaler, Karpenter, kube-scheduler, kube-controller-manager and metrics-server read
their timers once, at start, from flags and the scheduler's configuration file (Karpenter's
consolidation and provisioning timing live in its NodePools and node classes, re-applied
here too). So for a run at speed *s* each of them is restarted with its timers divided by *s*
(``core.simtime``), and restarted with the command line ``env up`` gave it when the
Simulation ends. Karpenter's hard-coded waits and kube-scheduler's queue follow the speed
too: the project's builds of both are restarted with ``SIMKUBE_SPEED`` (``env.pacing``),
which the command line of ``env up`` lacks, so the end of a Simulation puts them back at
speed 1; their timers are given in trace time (``Timer.paced``). The original command line is kept
in the environment's state (``base_argv``), so a crash between the two cannot lose it, and a
component whose command line would not change is not restarted at all.

Karpenter's ``consolidateAfter`` defaults to the environment's own (``env up
--consolidate-after``, trace time; ``environment_timers``), not to Karpenter's 0 s: a run
whose Simulation leaves it unset consolidates after the environment's value ÷ speed.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import yaml

from simkube.cloudprov.config import load_file
from simkube.core import simtime
from simkube.core.config import load_yaml_mapping
from simkube.core.flags import with_flags
from simkube.core.logs import get_logger
from simkube.core.replay_flags import run_flags
from simkube.core.replay_flags import skips_age_wait as flags_skip_age_wait
from simkube.core.simtime import REAL_TIME, TimerPlan, TimerSettings, TimeScale
from simkube.core.timers import NEVER, Component
from simkube.env import state
from simkube.env.autoscalers.cluster_autoscaler import NAME as AUTOSCALER
from simkube.env.autoscalers.karpenter import NAME as KARPENTER
from simkube.env.autoscalers.karpenter import apply_pools, run_argv
from simkube.env.autoscalers.karpenter_catalog import Disruption
from simkube.env.controlplane import run_access
from simkube.env.controlplane.components import Component as Process
from simkube.env.lifecycle import running
from simkube.env.pacing import paced_argv
from simkube.env.restarting import restart_record

log = get_logger(__name__)
LOCK_WAIT_S = 60.0
RUN_SCHEDULER_CONFIG = "scheduler-config.run.yaml"
CONFIG_KEYS = ("podInitialBackoffSeconds", "podMaxBackoffSeconds")
NODEPOOL_TIMERS = ("consolidateAfter",)  # Karpenter reads it from its NodePools, not flags
# Processes whose timers are all flags, and the catalogue's component for them.
FLAG_TIMERS = {Process.KUBE_CONTROLLER_MANAGER.value: Component.KUBE_CONTROLLER_MANAGER,
               Process.METRICS_SERVER.value: Component.METRICS_SERVER}
CONSOLIDATE_AFTER = f"{Component.KARPENTER.value}.consolidateAfter"


def _scheduler_argv(env: state.EnvState, base: list[str], plan: TimerPlan,
                    run_configmap: str) -> list[str]:
    """A run copy of the scheduler's configuration with the backoffs, the flush flag, and
    the run's speed for the build's queue clock (``env.pacing``): the three are trace time."""
    config_arg = next(arg for arg in base if arg.startswith("--config="))
    config = load_yaml_mapping(Path(config_arg.partition("=")[2]), what="scheduler config")
    for timer in plan.for_component(Component.KUBE_SCHEDULER):
        if timer.timer.name in CONFIG_KEYS:
            config[timer.timer.name] = timer.given_ms // 1000
    path = Path(env.directory) / RUN_SCHEDULER_CONFIG
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    flags = {"config": str(path), **plan.flags(Component.KUBE_SCHEDULER, skip=CONFIG_KEYS)}
    return paced_argv(with_flags(base, flags=flags), scale=plan.scale,
                      run_configmap=run_configmap)


def _wanted(env: state.EnvState, record: state.ComponentRecord,
            plan: TimerPlan | None, run_configmap: str, *, gated: bool) -> list[str]:
    base = record.base_argv or record.argv
    if plan is None:
        return base
    if record.name == AUTOSCALER:
        return with_flags(base, flags=run_flags(plan=plan, argv=base, gated=gated))
    if record.name == KARPENTER:
        return run_argv(base, plan=plan, skip=NODEPOOL_TIMERS, run_configmap=run_configmap)
    if record.name in FLAG_TIMERS:
        return with_flags(base, flags=plan.flags(FLAG_TIMERS[record.name]))
    if record.name == Process.KUBE_SCHEDULER.value:
        return _scheduler_argv(env, base, plan, run_configmap)
    return record.argv


def retime(name: str, *, scale: TimeScale, settings: TimerSettings | None = None,
           fresh: bool = False, run_configmap: str = "", gated: bool = False) -> list[str]:
    """Restart what must change for a run at ``scale`` with ``settings`` (trace time;
    None: production defaults, and the environment's own where it has them); the names of
    the components restarted. ``fresh`` restarts the autoscaler even when its command line
    stays: a run must not inherit what CA or Karpenter remembers of the previous one (when
    it last scaled up, which nodes have been unneeded since when, backed-off groups,
    pending consolidation decisions), or repetitions stop being comparable.
    ``run_configmap`` ("namespace/name"): the run's ConfigMap, whose holds the paced
    builds' clocks follow (``env.pacing``). ``gated``: sk-ctrl gates the run's scale-up,
    so CA scans on the gated cadence (``core.replay_flags.run_flags``)."""
    chosen = (settings or TimerSettings()).with_defaults(environment_timers(name))
    return _apply(name, simtime.plan(scale=scale, settings=chosen),
                  fresh=(AUTOSCALER, KARPENTER) if fresh else (), run_configmap=run_configmap,
                  gated=gated)


def skips_age_wait(name: str, *, scale: TimeScale) -> bool:
    """Whether a run at ``scale`` starts environment ``name``'s Cluster Autoscaler without
    production's pod-age wait (``core.replay_flags``); False without CA."""
    with running(name, wait=LOCK_WAIT_S) as env:
        for record in env.components:
            if record.name == AUTOSCALER and record.argv:
                return flags_skip_age_wait(scale=scale,
                                           argv=record.base_argv or record.argv)
    return False


def restore(name: str) -> list[str]:
    """Every component back on the command line ``env up`` gave it."""
    return _apply(name, None)


def _apply(name: str, plan: TimerPlan | None, *, fresh: tuple[str, ...] = (),
           run_configmap: str = "", gated: bool = False) -> list[str]:
    restarted: list[str] = []
    with running(name, wait=LOCK_WAIT_S) as env:
        if plan is not None and plan.scale != REAL_TIME and run_configmap:
            # the scheduler's build watches the holds as its own identity
            run_access.grant_scheduler(kubeconfig=Path(env.kubeconfig),
                                       run_configmap=run_configmap)
        for record in env.components:
            if not record.argv:
                continue
            argv = _wanted(env, record, plan, run_configmap, gated=gated)
            if argv == record.argv and record.name not in fresh:
                continue
            if not record.base_argv:
                record.base_argv = list(record.argv)
            started = time.monotonic()
            restart_record(env, record, argv=argv)
            if plan is None:
                record.base_argv = []
                state.save(env)
            restarted.append(record.name)
            log.info("component restarted with the run's timers" if plan else
                     "component restarted with its own timers", component=record.name,
                     speed=plan.scale.speed if plan else None,
                     seconds=round(time.monotonic() - started, 2))
        if env.autoscaler == KARPENTER:
            _retime_pools(env, plan)
    return restarted


def _retime_pools(env: state.EnvState, plan: TimerPlan | None) -> None:
    """Karpenter's NodePools and node classes: the run's consolidateAfter and provisioning
    delays ÷ speed, or the environment's own settings (``plan`` None)."""
    disruption = Disruption.from_state(env.disruption)
    if plan is not None:
        wall = plan.wall_ms(CONSOLIDATE_AFTER)
        disruption = replace(disruption, consolidate_after_ms=None if wall == NEVER else wall)
    apply_pools(kubeconfig=Path(env.kubeconfig), config=load_file(Path(env.node_groups)),
                disruption=disruption, scale=plan.scale if plan else REAL_TIME)


def environment_timers(name: str) -> dict[str, int]:
    """The timers environment ``name`` was started with (trace time), for the catalogue's
    ``from_environment`` ones: what a run uses where its Simulation sets none."""
    with running(name, wait=LOCK_WAIT_S) as env:
        if env.autoscaler != KARPENTER:
            return {}
        after = Disruption.from_state(env.disruption).consolidate_after_ms
        return {CONSOLIDATE_AFTER: NEVER if after is None else after}


def has_autoscaler(name: str) -> bool:
    with running(name, wait=LOCK_WAIT_S) as env:
        return env.component(AUTOSCALER) is not None


def autoscaler_of(name: str) -> str:
    """The autoscaler environment ``name`` runs ("" when none)."""
    with running(name, wait=LOCK_WAIT_S) as env:
        if env.autoscaler:
            return env.autoscaler
        return AUTOSCALER if env.component(AUTOSCALER) is not None else ""
