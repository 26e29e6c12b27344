from __future__ import annotations

import socket

import pytest

from simkube.core.errors import ConfigError
from simkube.env import ports

pytestmark = pytest.mark.unit


def test_allocate_gives_distinct_free_ports_avoiding_excluded() -> None:
    chosen = ports.allocate(6, exclude={1})
    assert len(set(chosen)) == 6
    assert 1 not in chosen
    assert all(ports.is_free(p) for p in chosen)


def test_require_free_names_the_taken_port() -> None:
    with socket.socket() as holder:
        holder.bind((ports.LOOPBACK, 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(ConfigError, match=f"port {port} on 127.0.0.1 is already in use"):
            ports.require_free(port, purpose="kube-apiserver")


def test_require_free_rejects_out_of_range() -> None:
    with pytest.raises(ConfigError, match="out of range"):
        ports.require_free(70000, purpose="kube-apiserver")
