"""What ``env status`` reports: each component's pid, port, and whether it is healthy.

A component is ``running`` when its process is ours and answers its health check,
``unhealthy`` when the process lives but the check fails, and ``crashed`` when the process
is gone.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from simkube.env import health, processes, state
from simkube.env.controlplane.components import Component
from simkube.env.lifecycle import unknown_environment
from simkube.env.paths import env_dir
from simkube.env.services.cloudprov_front import ADDRESS_KEY


class Health(StrEnum):
    RUNNING = "running"
    UNHEALTHY = "unhealthy"
    CRASHED = "crashed"


@dataclass(frozen=True, kw_only=True)
class ComponentStatus:
    name: str
    pid: int
    port: int
    health: Health
    detail: str
    log: str


@dataclass(frozen=True, kw_only=True)
class EnvStatus:
    name: str
    kubeconfig: str
    api_server: str
    nodes: int
    components: list[ComponentStatus]
    # gRPC addresses of the services (``env up --services``); None when not started.
    cloudprov: str | None = None
    cloudprov_front: str | None = None  # what CA talks to, when it runs (env up --autoscaler)
    driver: str | None = None
    ctrl: str | None = None
    autoscaler: str | None = None

    @property
    def healthy(self) -> bool:
        return all(c.health is Health.RUNNING for c in self.components)


def load_state(name: str) -> state.EnvState:
    existing = state.load(env_dir(name))
    if existing is None:
        raise unknown_environment(name)
    return existing


def component_status(record: state.ComponentRecord, pki: Path) -> ComponentStatus:
    if not processes.is_running(record.pid, record.start_ticks):
        verdict, detail = Health.CRASHED, "process is not running"
    else:
        verify = (health.api_ssl_context(pki) if record.name == Component.KUBE_APISERVER
                  else False)
        ok, detail = health.probe(record.health_url, verify=verify)
        verdict = Health.RUNNING if ok else Health.UNHEALTHY
    return ComponentStatus(name=record.name, pid=record.pid, port=record.port, health=verdict,
                           detail=detail, log=record.log)


def environment_status(name: str) -> EnvStatus:
    current = load_state(name)
    pki = Path(current.directory) / "pki"
    return EnvStatus(name=current.name, kubeconfig=current.kubeconfig,
                     api_server=current.api_server, nodes=current.nodes,
                     components=[component_status(c, pki) for c in current.components],
                     cloudprov=current.addresses.get("cloudprov"),
                     cloudprov_front=current.addresses.get(ADDRESS_KEY),
                     driver=current.addresses.get("driver"), ctrl=current.addresses.get("ctrl"),
                     autoscaler=current.addresses.get("autoscaler"))
