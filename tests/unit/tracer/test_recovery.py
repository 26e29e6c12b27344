from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from simkube.core.errors import ConfigError
from simkube.tracer.config import Retention
from simkube.tracer.store import Store
from tests.unit.tracer.conftest import obj, ref

pytestmark = pytest.mark.unit
OpenStore = Callable[..., Store]


def test_a_crash_loses_only_what_was_never_flushed(open_store: OpenStore,
                                                   tmp_path: Path) -> None:
    store = open_store()
    store.apply(ref("v1.Pod", "p"), obj("v1.Pod", "p"))
    store.flush()
    store.apply(ref("v1.Pod", "lost"), obj("v1.Pod", "lost"))
    os.close(store._lock)  # the process dies: no seal, the kernel drops the lock
    store._lock = -1
    recovered = Store(tmp_path / "store", header=store._header,
                      retention=Retention(max_age_seconds=0, max_bytes=0))
    try:
        assert set(recovered.live) == {ref("v1.Pod", "p")}
        assert recovered.status().events == 1
    finally:
        recovered.close()


def test_a_store_has_one_owner(open_store: OpenStore) -> None:
    open_store()
    with pytest.raises(ConfigError, match="in use by another sk-tracer"):
        open_store()


def test_unreadable_segment_is_set_aside(tmp_path: Path, open_store: OpenStore) -> None:
    directory = tmp_path / "store"
    directory.mkdir()
    (directory / "00000001.trace").write_bytes(b"garbage")
    store = open_store()
    assert (directory / "00000001.trace.unreadable").exists()
    assert store.status().segments == 1
