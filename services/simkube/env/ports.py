"""Loopback ports for an environment's components.

Ports are chosen free at ``env up`` time so several environments run side by side; a port the
user asks for explicitly is checked first so a clash is reported before anything starts.

They are chosen below the kernel's ephemeral range (``ip_local_port_range``), not by binding
port 0: a component restarted mid-run (``env/restarting.py``, every timed run restores its
timers so) must get its port back, and a port from the ephemeral range can meanwhile become
the local end of any outgoing connection (the autoscaler tier saw kube-controller-manager's
restart fail on "bind: address already in use" for such a port).
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

from simkube.core.errors import ConfigError

LOOPBACK = "127.0.0.1"
EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
LOWEST = 10000  # above the well-known and most registered service ports
DEFAULT_EPHEMERAL_LOW = 32768  # Linux's default when the range cannot be read


def is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((LOOPBACK, port))
        except OSError:
            return False
    return True


def require_free(port: int, *, purpose: str) -> int:
    if not 1 <= port <= 65535:
        raise ConfigError(f"{purpose} port {port} is out of range (1-65535)")
    if not is_free(port):
        raise ConfigError(f"port {port} on {LOOPBACK} is already in use; {purpose} cannot "
                          "listen there", hint="pick another port or stop whatever holds it")
    return port


def ephemeral_low(path: Path = EPHEMERAL_RANGE) -> int:
    """The first port of the kernel's ephemeral range (its default when unreadable)."""
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return DEFAULT_EPHEMERAL_LOW


def allocate(count: int, *, exclude: set[int] | None = None) -> list[int]:
    """``count`` distinct free loopback ports below the ephemeral range, none in ``exclude``."""
    high = ephemeral_low()
    candidates = [p for p in range(LOWEST, high) if p not in (exclude or set())]
    random.SystemRandom().shuffle(candidates)  # side-by-side environments rarely collide
    chosen: list[int] = []
    for port in candidates:
        if is_free(port):
            chosen.append(port)
            if len(chosen) == count:
                return chosen
    raise ConfigError(f"only {len(chosen)} of {count} loopback ports are free between "
                      f"{LOWEST} and {high - 1}", hint="stop environments you no longer need")
