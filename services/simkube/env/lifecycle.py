"""``env up`` and ``env down``: start the control plane in order, stop it completely.

``up`` writes state.json after every process it starts, and on any failure stops what it
started and removes the environment directory, so a failed ``up`` leaves nothing half-done.
``down`` stops components in reverse order and removes the directory; it also cleans up after
an ``up`` that was killed midway.
"""

from __future__ import annotations

import contextlib
import shutil
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from simkube.core.errors import EnvironmentStateError, SimkubeError
from simkube.env import ports, processes, service_startup, state
from simkube.env.autoscalers import cluster_autoscaler as autoscaler
from simkube.env.autoscalers import karpenter
from simkube.env.autoscalers.karpenter_catalog import Disruption
from simkube.env.autoscalers.kinds import AutoscalerKind
from simkube.env.controlplane import metrics_server, nodes, startup
from simkube.env.controlplane.certs import (
    ADMIN,
    CONTROLLER_MANAGER,
    KWOK,
    METRICS_SERVER,
    SCHEDULER,
    Identity,
    generate_pki,
)
from simkube.env.controlplane.components import Component, Layout, Ports, control_plane
from simkube.env.controlplane.kubeconfig import write_kubeconfig
from simkube.env.controlplane.schedconfig import load_user_config, write_scheduler_config
from simkube.env.paths import env_dir, known_env_names, state_dir
from simkube.env.toolchain.cache import binary_path
from simkube.env.toolchain.catalog import Binary

STAGES = Path(__file__).resolve().parent / "controlplane" / "kwok-stages.yaml"
# KWOK plays 4 pod stages at a time by default, which caps a replay at well under 100 pods a
# second; its API client is not rate limited, so more workers is all it takes.
# A KwokConfiguration read from a file gets none of KWOK's defaults (0.8.0 defaults only the one
# it makes up when there is none), so every option that matters is written out. In particular
# podsOnNodeSyncParallelism: with 0 nothing lists a new node's pods when KWOK starts managing
# it, and a pod whose event KWOK handled before it knew the node was never started
# (docs/kwok.md, issue #26); the pager is KWOK's default, a consistent list.
KWOK_OPTIONS = """apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  podPlayStageParallelism: 32
  nodePlayStageParallelism: 16
  nodeLeaseParallelism: 8
  podsOnNodeSyncParallelism: 4
  enablePodsOnNodeSyncListPager: true
"""


@dataclass(frozen=True, kw_only=True)
class UpOptions:
    name: str
    nodes: int = 0
    node_template: Path | None = None
    scheduler_config: Path | None = None
    apiserver_port: int | None = None
    services: bool = False  # also sk-cloudprov, sk-driver and sk-ctrl
    node_groups: Path | None = None  # for the services; default: the shipped node-groups.yaml
    autoscaler: AutoscalerKind | None = None  # also an autoscaler (implies services)
    autoscaler_binary: Path | None = None  # CA: else $SIMKUBE_CLUSTER_AUTOSCALER, else the cache
    autoscaler_flags: tuple[str, ...] = ()  # --name=value, replacing the default tuning
    cloudprov_front: bool = True  # CA reaches sk-cloudprov through sk-cloudprov-front
    disruption: Disruption | None = None  # Karpenter's NodePool disruption settings
    metrics_server: bool = False  # metrics-server over KWOK's emulated usage (HPAs, kubectl top)


def _allocate_ports(options: UpOptions) -> Ports:
    fixed = options.apiserver_port
    if fixed is not None:
        ports.require_free(fixed, purpose="kube-apiserver")
    free = ports.allocate(7 if options.metrics_server else 6,
                          exclude={fixed} if fixed else None)
    return Ports(etcd_client=free[0], etcd_peer=free[1], apiserver=fixed or free[2],
                 controller_manager=free[3], scheduler=free[4], kwok=free[5],
                 metrics_server=free[6] if options.metrics_server else 0)


def _prepare_files(layout: Layout, server: str, options: UpOptions,
                   user_scheduler_config: dict[str, object] | None) -> None:
    generate_pki(layout.pki)
    identities: dict[Path, Identity] = {layout.admin_kubeconfig: ADMIN}
    for identity in (CONTROLLER_MANAGER, SCHEDULER, KWOK, METRICS_SERVER):
        identities[layout.kubeconfig_for(identity.file_stem)] = identity
    for path, identity in identities.items():
        write_kubeconfig(path=path, server=server, pki=layout.pki, identity=identity,
                         context=f"simkube-{options.name}")
    write_scheduler_config(path=layout.scheduler_config,
                           kubeconfig=layout.kubeconfig_for(SCHEDULER.file_stem),
                           user_config=user_scheduler_config)
    metric = "\n---\n" + metrics_server.KWOK_METRIC if options.metrics_server else ""
    layout.kwok_config.write_text(KWOK_OPTIONS + "---\n" + STAGES.read_text() + metric)


def up(options: UpOptions) -> tuple[state.EnvState, bool]:
    """Start the environment; returns ``(state, created)`` — ``created`` is False when it was
    already running, which is not an error."""
    directory = env_dir(options.name)
    # Before the lock, which creates the directory: a refusal leaves no trace.
    ca_binary = None
    if options.autoscaler is AutoscalerKind.CLUSTER_AUTOSCALER:
        ca_binary = autoscaler.resolve(options.autoscaler_binary).path
        autoscaler.merge_flags(options.autoscaler_flags)  # refuse a bad flag before anything
        if options.cloudprov_front:
            binary_path(Binary.CLOUDPROV_FRONT)  # built?
    elif options.autoscaler is AutoscalerKind.KARPENTER:
        binary_path(Binary.KARPENTER)  # built? (its CRDs come with it)
        karpenter.merge_flags(options.autoscaler_flags)
    with state.locked(directory, name=options.name):
        existing = state.load(directory)
        if existing is not None:
            return _check_existing(existing, options), False
        layout = Layout(root=directory)
        env: state.EnvState | None = None
        try:
            user_config = (load_user_config(options.scheduler_config)
                           if options.scheduler_config else None)
            if options.nodes:
                nodes.load_template(options.node_template)  # fail before anything starts
            node_groups = (service_startup.check_node_groups(options.node_groups)
                           if options.services or options.autoscaler else None)
            allocated = _allocate_ports(options)
            control_plane(layout, allocated)  # resolves every binary before anything starts
            if options.metrics_server:
                metrics_server.metrics_server_spec(layout, allocated)
                metrics_server.usage_crds()
            server = f"https://{ports.LOOPBACK}:{allocated.apiserver}"
            env = state.EnvState(name=options.name, directory=str(directory),
                                 kubeconfig=str(layout.admin_kubeconfig), api_server=server,
                                 started_at=time.time(), ports=asdict(allocated))
            _prepare_files(layout, server, options, user_config)
            state.save(env)
            startup.launch(env, layout, nodes=options.nodes,
                           node_template=options.node_template)
            if node_groups is not None:
                service_startup.launch_services(env, layout, node_groups=node_groups,
                                                autoscaler_kind=options.autoscaler,
                                                autoscaler_binary=ca_binary,
                                                autoscaler_flags=options.autoscaler_flags,
                                                disruption=options.disruption,
                                                front=options.cloudprov_front)
        except (SimkubeError, OSError, KeyboardInterrupt) as exc:
            if env is not None:
                _teardown(env, keep_logs=True)
                if isinstance(exc, SimkubeError) and exc.hint is None:
                    exc.hint = f"component logs were kept in {failed_logs_dir(options.name)}"
            shutil.rmtree(directory, ignore_errors=True)
            raise
        return env, True


def _check_existing(existing: state.EnvState, options: UpOptions) -> state.EnvState:
    # "Already up" must not hide that the running one lacks what this call asked for.
    missing = [flag for flag, wanted, key in (("--services", options.services, "driver"),
                                              ("--autoscaler", options.autoscaler, "autoscaler"))
               if wanted and key not in existing.addresses]
    if options.metrics_server and existing.component(Component.METRICS_SERVER) is None:
        missing.append("--metrics-server")
    if options.autoscaler and existing.autoscaler and existing.autoscaler != options.autoscaler:
        missing.append(f"--autoscaler {options.autoscaler} (it runs {existing.autoscaler})")
    if missing:
        raise EnvironmentStateError(
            f"environment {existing.name!r} is already up without {' and '.join(missing)}",
            hint=f"run 'skctl env down --name {existing.name}' and then 'up' with the flags")
    dead = [c.name for c in existing.components
            if not processes.is_running(c.pid, c.start_ticks)]
    if dead:
        raise EnvironmentStateError(
            f"environment {existing.name!r} exists but {', '.join(dead)} "
            f"{'is' if len(dead) == 1 else 'are'} not running",
            hint=f"run 'skctl env down --name {existing.name}' and then 'up' again")
    return existing


def failed_logs_dir(name: str) -> Path:
    return state_dir() / "failed" / name


def _teardown(env: state.EnvState, *, keep_logs: bool = False) -> None:
    for component in reversed(env.components):
        processes.stop(component.pid, component.start_ticks)
    logs = Layout(root=Path(env.directory)).logs
    if keep_logs and logs.is_dir():
        kept = failed_logs_dir(env.name)
        shutil.rmtree(kept, ignore_errors=True)
        kept.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(logs, kept)
    shutil.rmtree(env.directory, ignore_errors=True)


@contextlib.contextmanager
def running(name: str, *, wait: float = 0.0) -> Iterator[state.EnvState]:
    """The running environment ``name``, locked for as long as the block runs."""
    directory = env_dir(name)
    if not state.state_path(directory).is_file():
        raise unknown_environment(name)
    with state.locked(directory, name=name, wait=wait):
        existing = state.load(directory)
        if existing is None:
            raise unknown_environment(name)
        yield existing


def down(name: str) -> state.EnvState:
    with running(name) as existing:
        _teardown(existing)
        return existing


def unknown_environment(name: str) -> EnvironmentStateError:
    known = known_env_names()
    listing = ", ".join(known) if known else "none are running"
    return EnvironmentStateError(f"no environment named {name!r} (known: {listing})",
                                 hint=f"start it with 'skctl env up --name {name}'")
