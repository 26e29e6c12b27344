"""Loopback ports for an environment's components.

Ports are chosen free at ``env up`` time so several environments run side by side; a port the
user asks for explicitly is checked first so a clash is reported before anything starts.

They are chosen outside the kernel's ephemeral range (``ip_local_port_range``), not by binding
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
DEFAULT_EPHEMERAL_RANGE = (32768, 60999)  # Linux's default, when the range cannot be read


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


def ephemeral_range(path: Path = EPHEMERAL_RANGE) -> tuple[int, int]:
    """The kernel's ephemeral port range, first and last port (Linux's default if unreadable)."""
    try:
        low, high = (int(field) for field in path.read_text().split()[:2])
    except (OSError, ValueError):
        return DEFAULT_EPHEMERAL_RANGE
    return low, high


def allocate(count: int, *, exclude: set[int] | None = None) -> list[int]:
    """``count`` distinct free loopback ports outside the ephemeral range, none in ``exclude``."""
    low, high = ephemeral_range()
    outside = [*range(LOWEST, low), *range(max(high + 1, LOWEST), 65536)]
    candidates = [p for p in outside if p not in (exclude or set())]
    random.SystemRandom().shuffle(candidates)  # side-by-side environments rarely collide
    chosen: list[int] = []
    for port in candidates:
        if is_free(port):
            chosen.append(port)
            if len(chosen) == count:
                return chosen
    raise ConfigError(f"only {len(chosen)} of {count} loopback ports outside the ephemeral "
                      f"range {low}-{high} are free", hint="stop environments you no longer need")
