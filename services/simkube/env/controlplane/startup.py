"""Starting the components in dependency order and waiting until each one is usable.

"Usable" is stricter than "running": the API server answers ``/readyz``, the controller
manager, scheduler, KWOK (and metrics-server, when asked for: its APIService Available too)
answer their health checks, the ``default`` ServiceAccount exists
(proof that the controllers reconcile), and requested fake nodes are Ready. A component that
dies or stays unhealthy fails the start with its last log lines in the message.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from simkube.core.errors import EnvironmentStateError
from simkube.core.kubeapi import SERVICE_ACCOUNTS
from simkube.env import health, processes, state
from simkube.env.controlplane import metrics_server
from simkube.env.controlplane import nodes as fake_nodes
from simkube.env.controlplane.components import (
    Component,
    ComponentSpec,
    Layout,
    Ports,
    control_plane,
)

HEALTH_TIMEOUT = {Component.KUBE_APISERVER: 60.0}
DEFAULT_HEALTH_TIMEOUT = 30.0
NODES_READY_TIMEOUT = 120.0


def last_lines(path: str, lines: int = 8) -> str:
    """The end of a component's log, indented, for an error message."""
    try:
        text = Path(path).read_text(errors="replace").strip().splitlines()
    except OSError:
        return "    (no log)"
    return "\n".join(f"    {line[:300]}" for line in text[-lines:]) or "    (empty log)"


def _start(spec: ComponentSpec, layout: Layout, env: state.EnvState) -> state.ComponentRecord:
    log_path = layout.logs / f"{spec.component.value}.log"
    pid, ticks = processes.start_detached(spec.argv, log_path=log_path, cwd=layout.root)
    record = state.ComponentRecord(name=spec.component.value, pid=pid, start_ticks=ticks,
                                   port=spec.port, health_url=spec.health_url,
                                   log=str(log_path), argv=spec.argv)
    env.components.append(record)
    state.save(env)
    return record


def _wait_healthy(record: state.ComponentRecord, layout: Layout) -> None:
    component = Component(record.name)
    verify = (health.api_ssl_context(layout.pki) if component is Component.KUBE_APISERVER
              else False)
    ok, detail = health.wait_until(
        lambda: health.probe(record.health_url, verify=verify),
        timeout=HEALTH_TIMEOUT.get(component, DEFAULT_HEALTH_TIMEOUT),
        alive=lambda: processes.is_running(record.pid, record.start_ticks))
    if not ok:
        raise EnvironmentStateError(
            f"{record.name} did not become healthy: {detail}; last lines of {record.log}:\n"
            f"{last_lines(record.log)}")


def _wait_default_service_account(env: state.EnvState, layout: Layout) -> None:
    url = env.api_server + SERVICE_ACCOUNTS.path(namespace="default", name="default")
    ok, detail = health.wait_until(
        lambda: health.probe(url, verify=health.api_ssl_context(layout.pki)),
        timeout=DEFAULT_HEALTH_TIMEOUT, interval=0.2)
    if not ok:
        raise EnvironmentStateError(f"the default ServiceAccount never appeared: {detail}")


def launch(env: state.EnvState, layout: Layout, *, nodes: int,
           node_template: Path | None) -> None:
    """Start every component in order and return once the cluster is usable."""
    allocated = Ports(**env.ports)
    specs = control_plane(layout, allocated)
    # etcd, then the API server; the rest only need the API server, so they start together.
    for spec in specs[:2]:
        _wait_healthy(_start(spec, layout, env), layout)
    if allocated.metrics_server:  # KWOK watches the usage objects from its start
        metrics_server.install_usage_crds(layout.admin_kubeconfig)
        specs.append(metrics_server.metrics_server_spec(layout, allocated))
    started = [_start(spec, layout, env) for spec in specs[2:]]
    for record in started:
        _wait_healthy(record, layout)
    _wait_default_service_account(env, layout)
    if allocated.metrics_server:
        metrics_server.register(layout, port=allocated.metrics_server)
    if nodes:
        template = fake_nodes.load_template(node_template)
        names = fake_nodes.node_names(nodes)
        tls = health.api_ssl_context(layout.pki)
        asyncio.run(fake_nodes.create_nodes(server=env.api_server, tls=tls, template=template,
                                       names=names))
        asyncio.run(fake_nodes.wait_nodes_ready(server=env.api_server, tls=tls, names=names,
                                           timeout=NODES_READY_TIMEOUT))
        env.nodes = nodes
        state.save(env)
