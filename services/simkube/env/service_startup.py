"""Starting simkube's services after the control plane and waiting until each one serves.

Each service is recorded in state.json the moment it starts, so ``env down`` (or the cleanup
of a failed ``env up``) stops it like any control-plane component. A service that exits or
never reports ``SERVING`` fails the start with its last log lines.
"""

from __future__ import annotations

from pathlib import Path

from simkube.cloudprov.config import load_file
from simkube.core.errors import EnvironmentStateError
from simkube.env import health, ports, processes, state
from simkube.env.autoscalers import cluster_autoscaler as autoscaler
from simkube.env.autoscalers import karpenter
from simkube.env.autoscalers.karpenter_catalog import Disruption
from simkube.env.autoscalers.kinds import AutoscalerKind
from simkube.env.controlplane.components import Layout
from simkube.env.controlplane.startup import last_lines
from simkube.env.paths import results_dir
from simkube.env.services import cloudprov_front
from simkube.env.services.commands import (
    ADDRESS_KEYS,
    DEFAULT_NODE_GROUPS,
    PORT_COUNT,
    Service,
    ServicePorts,
    ServiceSpec,
    address,
    script,
    service_specs,
)
from simkube.env.toolchain.cache import binary_path
from simkube.env.toolchain.catalog import Binary

# Python services import grpc, protobuf and kubernetes_asyncio before they listen: on two
# busy cores that alone can take ten seconds.
HEALTH_TIMEOUT = 90.0


def _start(spec: ServiceSpec, layout: Layout, env: state.EnvState) -> state.ComponentRecord:
    log_path = layout.logs / f"{spec.name}.log"
    pid, ticks = processes.start_detached(spec.argv, log_path=log_path, cwd=layout.root)
    record = state.ComponentRecord(name=spec.name, pid=pid, start_ticks=ticks, port=spec.port,
                                   health_url=spec.health_url, log=str(log_path),
                                   argv=spec.argv)
    env.components.append(record)
    state.save(env)
    return record


def _wait_serving(record: state.ComponentRecord) -> None:
    ok, detail = health.wait_until(
        lambda: health.probe(record.health_url, verify=False), timeout=HEALTH_TIMEOUT,
        alive=lambda: processes.is_running(record.pid, record.start_ticks), interval=0.2)
    if not ok:
        raise EnvironmentStateError(
            f"{record.name} did not become healthy: {detail}; last lines of {record.log}:\n"
            f"{last_lines(record.log)}")


def launch_services(env: state.EnvState, layout: Layout, *, node_groups: Path,
                    autoscaler_kind: AutoscalerKind | None = None,
                    autoscaler_binary: Path | None = None,
                    autoscaler_flags: tuple[str, ...] = (),
                    disruption: Disruption | None = None, front: bool = True) -> None:
    """Start sk-driver, sk-ctrl, and the nodes' provider: sk-cloudprov (with CA when asked,
    through sk-cloudprov-front unless ``front`` is False) or Karpenter."""
    karpenter = autoscaler_kind is AutoscalerKind.KARPENTER
    taken = set(env.ports.values())
    # Then CA's (or Karpenter's health) port, Karpenter's metrics, the front's two.
    free = ports.allocate(PORT_COUNT + 4, exclude=taken)
    allocated = ServicePorts.from_list(free)
    results = results_dir(env.name)
    results.mkdir(parents=True, exist_ok=True)
    # The autoscaler's loops are counted from its /metrics (ctrl/autoscaler_loops.py): CA's
    # on its --address (the port it gets below), the Karpenter build's on --metrics-port.
    metrics_url = (f"http://{address(free[PORT_COUNT + 1])}/metrics" if karpenter
                   else f"http://{address(free[PORT_COUNT])}/metrics"
                   if autoscaler_binary is not None else None)
    specs = service_specs(env_name=env.name, layout=layout, ports=allocated,
                          node_groups=node_groups, results=results, cloudprov=not karpenter,
                          autoscaler_metrics_url=metrics_url)
    # Started together, waited for in turn: the three only need the API server.
    for record in [_start(spec, layout, env) for spec in specs]:
        _wait_serving(record)
    env.addresses = {ADDRESS_KEYS[service]: address(allocated.grpc_port(service))
                     for service in Service if not (karpenter and service is Service.CLOUDPROV)}
    env.node_groups = str(node_groups)
    state.save(env)
    if karpenter:
        _launch_karpenter(env, layout, node_groups=node_groups, health_port=free[PORT_COUNT],
                          metrics_port=free[PORT_COUNT + 1], flags=autoscaler_flags,
                          disruption=disruption or Disruption())
    elif autoscaler_binary is not None:
        target = address(allocated.cloudprov)
        if front:
            spec = cloudprov_front.front_spec(
                binary=binary_path(Binary.CLOUDPROV_FRONT), port=free[PORT_COUNT + 2],
                metrics_port=free[PORT_COUNT + 3], upstream=target)
            _wait_serving(_start(spec, layout, env))
            target = env.addresses[cloudprov_front.ADDRESS_KEY] = address(spec.port)
            state.save(env)
        autoscaler.write_cloud_config(layout=layout, cloudprov_address=target)
        spec = autoscaler.autoscaler_spec(binary=autoscaler_binary, layout=layout,
                                          port=free[PORT_COUNT], extra=autoscaler_flags)
        _wait_serving(_start(spec, layout, env))
        env.addresses["autoscaler"] = address(free[PORT_COUNT])
        env.autoscaler = str(AutoscalerKind.CLUSTER_AUTOSCALER)
        state.save(env)


def _launch_karpenter(env: state.EnvState, layout: Layout, *, node_groups: Path,
                      health_port: int, metrics_port: int, flags: tuple[str, ...],
                      disruption: Disruption) -> None:
    config = load_file(node_groups)
    karpenter.write_instance_types(layout=layout, config=config)
    karpenter.install(kubeconfig=layout.admin_kubeconfig, config=config, disruption=disruption)
    spec = karpenter.karpenter_spec(layout=layout, health_port=health_port,
                                    metrics_port=metrics_port, extra=flags)
    _wait_serving(_start(spec, layout, env))
    env.addresses["autoscaler"] = address(health_port)
    env.autoscaler = str(AutoscalerKind.KARPENTER)
    env.disruption = disruption.to_state()
    state.save(env)


def check_node_groups(path: Path | None) -> Path:
    """The node-groups file as an absolute path, checked in full before anything starts."""
    chosen = (path or DEFAULT_NODE_GROUPS).resolve()
    load_file(chosen)  # a ConfigError (exit 2) naming the group and field
    for service in Service:
        script(service.value)
    return chosen
