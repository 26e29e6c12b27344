"""Loopback ports for an environment's components.

Ports are chosen free at ``env up`` time so several environments run side by side; a port the
user asks for explicitly is checked first so a clash is reported before anything starts.
"""

from __future__ import annotations

import socket

from simkube.core.errors import ConfigError

LOOPBACK = "127.0.0.1"


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


def allocate(count: int, *, exclude: set[int] | None = None) -> list[int]:
    """``count`` distinct free loopback ports, none of them in ``exclude``."""
    taken = set(exclude or ())
    sockets: list[socket.socket] = []
    try:
        while len(sockets) < count:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((LOOPBACK, 0))
            if sock.getsockname()[1] in taken:
                sock.close()
                continue
            taken.add(sock.getsockname()[1])
            sockets.append(sock)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for sock in sockets:
            sock.close()
