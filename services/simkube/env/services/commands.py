"""The command lines of simkube's own services in a local environment, bound to loopback.

``skctl env up --services`` runs sk-cloudprov (node groups for Cluster Autoscaler), sk-driver
(replays traces) and sk-ctrl (runs Simulations through sk-driver) as supervised components
next to the control plane. They are the console scripts installed beside the running Python,
so the environment always runs the code of the skctl that started it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from simkube.core.errors import EnvironmentStateError
from simkube.env import grpcprobe
from simkube.env.controlplane.components import Layout
from simkube.env.ports import LOOPBACK

DEFAULT_NODE_GROUPS = Path(__file__).resolve().parent / "node-groups.yaml"


class Service(StrEnum):
    CLOUDPROV = "sk-cloudprov"
    DRIVER = "sk-driver"
    CTRL = "sk-ctrl"


# The keys ``env status --json`` shows each service's gRPC address under.
ADDRESS_KEYS = {Service.CLOUDPROV: "cloudprov", Service.DRIVER: "driver", Service.CTRL: "ctrl"}


@dataclass(frozen=True, kw_only=True)
class ServicePorts:
    """A gRPC port and a Prometheus port per service."""

    cloudprov: int
    cloudprov_metrics: int
    driver: int
    driver_metrics: int
    ctrl: int
    ctrl_metrics: int

    @classmethod
    def from_list(cls, ports: list[int]) -> ServicePorts:
        return cls(cloudprov=ports[0], cloudprov_metrics=ports[1], driver=ports[2],
                   driver_metrics=ports[3], ctrl=ports[4], ctrl_metrics=ports[5])

    def grpc_port(self, service: Service) -> int:
        return {Service.CLOUDPROV: self.cloudprov, Service.DRIVER: self.driver,
                Service.CTRL: self.ctrl}[service]


PORT_COUNT = 6


@dataclass(frozen=True, kw_only=True)
class ServiceSpec:
    name: str
    argv: list[str]
    port: int
    health_url: str


def script(name: str) -> Path:
    """A console script of this installation, or an error saying how to install it."""
    path = Path(sys.executable).parent / name
    if not path.is_file():
        raise EnvironmentStateError(f"{name} is not installed next to {sys.executable}",
                                    hint="run 'make install' in the checkout")
    return path


def address(port: int) -> str:
    return f"{LOOPBACK}:{port}"


def service_specs(*, env_name: str, layout: Layout, ports: ServicePorts, node_groups: Path,
                  results: Path, cloudprov: bool = True,
                  autoscaler_metrics_url: str | None = None) -> list[ServiceSpec]:
    """sk-cloudprov (unless Karpenter provides the nodes: ``cloudprov`` False), sk-driver and
    sk-ctrl; none needs another to start, so order is free. ``autoscaler_metrics_url``:
    Cluster Autoscaler's /metrics, where sk-ctrl counts its loops to hold runs' clocks."""
    kubeconfig = f"--kubeconfig={layout.admin_kubeconfig}"

    def spec(service: Service, *args: str) -> ServiceSpec:
        port = ports.grpc_port(service)
        return ServiceSpec(name=service.value, port=port,
                           health_url=grpcprobe.health_url(address(port)),
                           argv=[str(script(service.value)), *args])

    specs = [
        spec(Service.CLOUDPROV, f"--config={node_groups}", kubeconfig,
             f"--listen={address(ports.cloudprov)}",
             f"--metrics-listen={address(ports.cloudprov_metrics)}", "--log-json"),
        spec(Service.DRIVER, "serve", kubeconfig, f"--listen={address(ports.driver)}",
             f"--metrics-listen={address(ports.driver_metrics)}", "--grace=10"),
        spec(Service.CTRL, "serve", f"--driver={address(ports.driver)}", kubeconfig,
             f"--results-dir={results}", f"--node-groups={node_groups}",
             # Each run's timers: sk-ctrl restarts CA, scheduler and controller-manager
             # through this environment's supervisor (env/retiming.py).
             f"--env={env_name}",
             f"--listen={address(ports.ctrl)}",
             f"--metrics-listen={address(ports.ctrl_metrics)}", "--log-json",
             *([f"--autoscaler-metrics-url={autoscaler_metrics_url}"]
               if autoscaler_metrics_url else [])),
    ]
    return specs if cloudprov else specs[1:]
