from __future__ import annotations

import socket
from pathlib import Path

import pytest

from simkube.core.errors import ConfigError
from simkube.env import ports

pytestmark = pytest.mark.unit


def test_allocate_gives_distinct_free_ports_avoiding_excluded() -> None:
    chosen = ports.allocate(6, exclude={1})
    assert len(set(chosen)) == 6
    assert 1 not in chosen
    assert all(ports.is_free(p) for p in chosen)
    low, high = ports.ephemeral_range()
    assert all(ports.LOWEST <= p < low or p > high for p in chosen)


def test_ephemeral_range_reads_the_table_and_falls_back(tmp_path: Path) -> None:
    table = tmp_path / "range"
    table.write_text("40000\t60999\n")
    assert ports.ephemeral_range(table) == (40000, 60999)
    assert ports.ephemeral_range(tmp_path / "missing") == ports.DEFAULT_EPHEMERAL_RANGE


def test_allocate_says_when_too_few_ports_are_free() -> None:
    with pytest.raises(ConfigError, match="loopback ports outside the ephemeral range"):
        ports.allocate(65536)


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
