"""Running the real ``sk-tracer`` command against the session environment.

Each test gets its own tracer process (its own store, port and namespace filter), started
and restarted exactly as a user would, and exports through the real ``skctl export``.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from simkube.trace import Trace, read_trace
from simkube.tracer.client import get_status
from tests.conftest import SimEnv, skctl
from tests.support.kube import eventually

SK_TRACER = str(Path(sys.executable).parent / "sk-tracer")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class TracerProcess:
    kubeconfig: str
    config: Path
    store: Path
    log: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def start(self, *, watching: int) -> None:
        """Start and wait until ``watching`` kinds are watching."""
        self.spawn()
        await self.wait_watching(watching)

    def spawn(self) -> None:
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [SK_TRACER, "--kubeconfig", self.kubeconfig, "--config", str(self.config),
                 "--store", str(self.store), "--listen", self.address, "--log-json"],
                stdout=log, stderr=subprocess.STDOUT)

    async def wait_watching(self, count: int, *, resyncs: int = 0) -> None:
        async def ready() -> bool:
            if self.process is not None and self.process.poll() is not None:
                raise AssertionError(f"sk-tracer exited:\n{self.log.read_text()[-3000:]}")
            try:
                status = await get_status(self.address, timeout=2)
            except Exception:  # not listening yet
                return False
            watching = [k for k in status.kinds if k.state == 2 and k.resyncs >= resyncs]
            return len(watching) >= count
        await eventually(ready, timeout=60, what=f"{count} kinds watching")

    def stop(self, *, kill: bool = False) -> None:
        if self.process is None:
            return
        self.process.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
        self.process.wait(timeout=30)
        self.process = None

    async def status(self) -> Any:
        return await get_status(self.address)

    def export(self, tmp: Path, *args: str) -> Trace:
        output = tmp / f"export-{time.monotonic_ns()}.trace"
        skctl("export", "--tracer", self.address, "-o", str(output), *args)
        return read_trace(output)


@pytest.fixture
async def tracer(sim_env: SimEnv, tmp_path: Path,
                 ) -> AsyncIterator[Callable[[dict[str, Any]], TracerProcess]]:
    """Make a tracer for a config (not started); every one is stopped after the test."""
    made: list[TracerProcess] = []

    def make(config: dict[str, Any]) -> TracerProcess:
        path = tmp_path / f"tracer-{len(made)}.yaml"
        path.write_text(yaml.safe_dump(config))
        process = TracerProcess(kubeconfig=sim_env.kubeconfig, config=path,
                                store=tmp_path / f"store-{len(made)}",
                                log=tmp_path / f"tracer-{len(made)}.log")
        made.append(process)
        return process

    yield make
    for process in made:
        process.stop()
    await asyncio.sleep(0)


def events_of(trace: Trace) -> list[tuple[str, str, str]]:
    """(op, kind key, ns/name) for every object of every event, in order."""
    rows = []
    for event in trace.events:
        rows += [("apply", ref.kind_key, ref.ns_name) for ref in event.applied_refs()]
        rows += [("delete", ref.kind_key, ref.ns_name) for ref in event.deleted_refs()]
    return rows


def unpacked(directory: Path, pattern: str = "*") -> bytes:
    """Every byte of the matching files, native traces decompressed, for grepping."""
    import zstandard  # noqa: PLC0415

    data = b""
    for path in sorted(directory.glob(pattern)):
        raw = path.read_bytes()
        if path.suffix == ".trace":
            reader = zstandard.ZstdDecompressor().stream_reader(raw[12:],
                                                                read_across_frames=True)
            try:
                raw = reader.read()
            except zstandard.ZstdError:
                raw = b""
        data += raw
    return data


def env_state(name: str) -> dict[str, Any]:
    import json  # noqa: PLC0415

    home = Path(os.environ.get("SIMKUBE_HOME", "~/.local/state/simkube")).expanduser()
    return json.loads((home / "envs" / name / "state.json").read_text())
