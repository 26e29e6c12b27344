"""The record of a running environment (state.json) and the lock that serialises changes.

The state file is rewritten atomically after every component starts, so ``env down`` can
always find and stop what a crashed or interrupted ``env up`` left behind. The lock is an
flock on a file in the environment directory: the kernel releases it when its holder dies, so
it can never go stale.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from simkube.core.errors import EnvironmentStateError


@dataclass(kw_only=True)
class ComponentRecord:
    name: str
    pid: int
    start_ticks: int
    port: int
    health_url: str
    log: str
    argv: list[str] = field(default_factory=list)
    # The command line it was started with, kept while a run's timers change ``argv``.
    base_argv: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class EnvState:
    name: str
    directory: str
    kubeconfig: str
    api_server: str
    started_at: float
    ports: dict[str, int] = field(default_factory=dict)
    components: list[ComponentRecord] = field(default_factory=list)
    nodes: int = 0
    # gRPC addresses of the services started with --services, keyed cloudprov/driver/ctrl.
    addresses: dict[str, str] = field(default_factory=dict)
    autoscaler: str = ""  # services.AutoscalerKind, when one runs
    node_groups: str = ""  # the node-groups file the services and autoscaler read
    # Karpenter's NodePool disruption settings as env up gave them (karpenter_catalog).
    disruption: dict[str, Any] = field(default_factory=dict)

    def component(self, name: str) -> ComponentRecord | None:
        return next((c for c in self.components if c.name == name), None)


def state_path(directory: Path) -> Path:
    return directory / "state.json"


def save(state: EnvState) -> None:
    path = state_path(Path(state.directory))
    scratch = path.with_suffix(".json.tmp")
    scratch.write_text(json.dumps(asdict(state), indent=2))
    scratch.replace(path)


def load(directory: Path) -> EnvState | None:
    path = state_path(directory)
    try:
        raw: dict[str, Any] = json.loads(path.read_text())
        components = [ComponentRecord(**c) for c in raw.pop("components", [])]
        return EnvState(**raw, components=components)
    except FileNotFoundError:
        return None
    except (ValueError, TypeError) as exc:
        raise EnvironmentStateError(
            f"{path} is damaged ({exc})",
            hint=f"stop any leftover processes and remove {directory}",
        ) from None


@contextmanager
def locked(directory: Path, *, name: str, wait: float = 0.0) -> Iterator[None]:
    """Hold the environment's lock; fail, naming the holder, if someone else has it for
    longer than ``wait`` seconds (at once by default: a user should not wait silently)."""
    directory.mkdir(parents=True, exist_ok=True)
    lock_path = directory / "lock"
    deadline = time.monotonic() + wait
    with lock_path.open("a+") as handle:
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() < deadline:
                    time.sleep(0.2)
                    continue
                handle.seek(0)
                holder = handle.read().strip() or "another process"
                raise EnvironmentStateError(
                    f"environment {name!r} is being changed by pid {holder}; try again when "
                    "it is done") from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
