"""Restarting one component of a running environment, gracefully or by SIGKILL.

Crashes are part of what a simulator must survive: sk-cloudprov, Cluster Autoscaler and
Karpenter keep their state in the cluster, so a restart mid-scale-up must neither lose nor
duplicate a node (for Karpenter's KWOK provider that takes ``karpenter_instances``).
``skctl env restart`` lets a user (and the autoscaler test tier) check that with the real
processes: the component is stopped, started again with the command line, log and port it
had, and waited for until its health check answers, as ``env up`` does — and, for the
controller-manager, until its controllers act (``controlplane/readiness.py``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

from simkube.core.errors import EnvironmentStateError
from simkube.core.logs import get_logger
from simkube.env import health, processes, state
from simkube.env.autoscalers.karpenter import NAME as KARPENTER
from simkube.env.autoscalers.karpenter_instances import recover_instances
from simkube.env.controlplane.components import Component
from simkube.env.controlplane.metrics_server import wait_available
from simkube.env.controlplane.readiness import wait_for_controllers
from simkube.env.controlplane.startup import last_lines
from simkube.env.lifecycle import running

log = get_logger(__name__)
HEALTH_TIMEOUT = 90.0
# A restarted component that exits at once because its port is still taken is started
# again: seen twice in the autoscaler tier, kube-controller-manager restored after a run
# ("bind: address already in use" on its own port, outside the ephemeral range) with the
# old process gone. The warning names the sockets then on the port, for the cause.
PORT_TAKEN = "address already in use"
BIND_ATTEMPTS = 10
BIND_RETRY_S = 1.0


def restart(name: str, component: str, *, kill: bool = False) -> state.ComponentRecord:
    """Stop ``component`` (SIGKILL when ``kill``) and start it again; its new record."""
    with running(name) as env:
        record = env.component(component)
        if record is None or not record.argv:
            known = ", ".join(c.name for c in env.components if c.argv)
            raise EnvironmentStateError(
                f"environment {name!r} has no component {component!r} to restart",
                hint=f"its components: {known}")
        return restart_record(env, record, kill=kill)


def restart_record(env: state.EnvState, record: state.ComponentRecord, *,
                   argv: list[str] | None = None, kill: bool = False) -> state.ComponentRecord:
    """Restart ``record`` of the locked ``env`` (with ``argv`` when given) until healthy."""
    if kill:
        _kill(record)
    else:
        processes.stop(record.pid, record.start_ticks)
    if argv is not None:
        record.argv = argv
    for attempt in range(1, BIND_ATTEMPTS + 1):
        ok, detail = _start(env, record)
        if ok:
            break
        tail = last_lines(record.log)
        if (attempt == BIND_ATTEMPTS or processes.is_running(record.pid, record.start_ticks)
                or PORT_TAKEN not in tail):
            raise EnvironmentStateError(
                f"{record.name} did not become healthy after its restart: {detail}; last "
                f"lines of {record.log}:\n{tail}")
        log.warning("port still taken after the restart; starting again", component=record.name,
                    port=record.port, attempt=attempt, sockets=sockets_on(record.port))
        time.sleep(BIND_RETRY_S)
    if record.name == KARPENTER:  # its in-flight instances died with it; a cloud's would not
        recover_instances(kubeconfig=Path(env.kubeconfig))
    if record.name == Component.KUBE_CONTROLLER_MANAGER.value:  # healthy is not yet acting
        wait_for_controllers(kubeconfig=Path(env.kubeconfig))
    if record.name == Component.METRICS_SERVER.value:  # live is not yet reachable through
        wait_available(kubeconfig=Path(env.kubeconfig))  # the aggregator
    return record


def _start(env: state.EnvState, record: state.ComponentRecord) -> tuple[bool, str]:
    """Start ``record``'s command line and wait until it is healthy: (healthy, detail)."""
    pid, ticks = processes.start_detached(record.argv, log_path=Path(record.log),
                                          cwd=Path(env.directory))
    record.pid, record.start_ticks = pid, ticks
    state.save(env)
    return health.wait_until(
        lambda: health.probe(record.health_url, verify=False), timeout=HEALTH_TIMEOUT,
        alive=lambda: processes.is_running(pid, ticks), interval=0.2)


def sockets_on(port: int) -> list[str]:
    """The loopback TCP sockets on local ``port`` (state, remote port; inode of the owner's
    socket) from /proc/net/tcp, for a diagnosis."""
    found: list[str] = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
            fields = line.split()
            local, remote, status, inode = fields[1], fields[2], fields[3], fields[9]
            if int(local.split(":")[1], 16) == port:
                found.append(f"{TCP_STATES.get(status, status)} to :"
                             f"{int(remote.split(':')[1], 16)} (inode {inode})")
    return found


TCP_STATES = {"01": "ESTABLISHED", "06": "TIME_WAIT", "08": "CLOSE_WAIT", "0A": "LISTEN"}


def _kill(record: state.ComponentRecord) -> None:
    """SIGKILL the component's process group and wait until it is gone."""
    if not processes.is_running(record.pid, record.start_ticks):
        return
    try:
        os.killpg(record.pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    processes.stop(record.pid, record.start_ticks, grace=5.0)  # waits; escalates if needed
