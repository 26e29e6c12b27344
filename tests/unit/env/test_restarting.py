"""Restarting a component whose port its old process has not let go of yet: started again
until the port is free, with real processes and a real socket."""

from __future__ import annotations

import socket
import sys
import threading
import time
from pathlib import Path

import pytest

from simkube.core.errors import EnvironmentStateError
from simkube.env import processes, restarting, state

pytestmark = pytest.mark.unit

# Serves /healthz on the port, or says what Go's net.Listen says when it is taken.
SERVER = """
import http.server, sys
class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"ok")
    def log_message(self, *args):
        pass
try:
    server = http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Health)
except OSError:
    print(f"failed to listen on 127.0.0.1:{sys.argv[1]}: bind: address already in use",
          flush=True)
    sys.exit(1)
server.serve_forever()
"""


def component(tmp_path: Path, port: int) -> tuple[state.EnvState, state.ComponentRecord]:
    record = state.ComponentRecord(
        name="toy", pid=0, start_ticks=0, port=port,
        health_url=f"http://127.0.0.1:{port}/healthz", log=str(tmp_path / "toy.log"),
        argv=[sys.executable, "-c", SERVER, str(port)])
    env = state.EnvState(name="t", directory=str(tmp_path), kubeconfig="", api_server="",
                         started_at=0.0, components=[record])
    return env, record


def taken_port() -> socket.socket:
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    return holder


def test_a_restart_waits_for_its_port_to_be_let_go(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(restarting, "BIND_RETRY_S", 0.2)
    holder = taken_port()
    env, record = component(tmp_path, holder.getsockname()[1])
    threading.Timer(1.0, holder.close).start()  # the old process's socket goes away
    started = time.monotonic()
    restarting.restart_record(env, record)
    try:
        assert processes.is_running(record.pid, record.start_ticks)
        assert time.monotonic() - started >= 0.9
        assert "address already in use" in Path(record.log).read_text()
    finally:
        processes.stop(record.pid, record.start_ticks, grace=2)


def test_a_port_that_stays_taken_fails_the_restart_with_the_log(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(restarting, "BIND_RETRY_S", 0.05)
    monkeypatch.setattr(restarting, "BIND_ATTEMPTS", 3)
    holder = taken_port()
    env, record = component(tmp_path, holder.getsockname()[1])
    try:
        with pytest.raises(EnvironmentStateError, match="address already in use"):
            restarting.restart_record(env, record)
        assert Path(record.log).read_text().count("address already in use") == 3
        assert any(s.startswith("LISTEN") for s in restarting.sockets_on(record.port))
    finally:
        holder.close()
