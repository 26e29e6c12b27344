from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from simkube.core.errors import EnvironmentStateError
from simkube.env import state

pytestmark = pytest.mark.unit


def _sample(directory: Path) -> state.EnvState:
    return state.EnvState(name="dev", directory=str(directory), kubeconfig="k",
                          api_server="https://127.0.0.1:1", started_at=1.0,
                          ports={"apiserver": 1},
                          components=[state.ComponentRecord(name="etcd", pid=10, start_ticks=5,
                                                            port=2, health_url="u", log="l")])


def test_round_trip(tmp_path: Path) -> None:
    original = _sample(tmp_path)
    state.save(original)
    assert state.load(tmp_path) == original
    assert state.load(tmp_path / "missing") is None


def test_damaged_state_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "state.json").write_text("{not json")
    with pytest.raises(EnvironmentStateError, match=r"state\.json is damaged"):
        state.load(tmp_path)


def test_lock_is_exclusive_and_names_the_holder(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from pathlib import Path; from simkube.env import state\n"
         f"with state.locked(Path({str(tmp_path)!r}), name='dev'):\n"
         "    print('locked', flush=True); time.sleep(30)"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(EnvironmentStateError, match=f"being changed by pid {holder.pid}"), \
                state.locked(tmp_path, name="dev"):
            pass
    finally:
        holder.kill()
        holder.wait()
    with state.locked(tmp_path, name="dev"):
        pass  # a dead holder's lock is released by the kernel: never stale
