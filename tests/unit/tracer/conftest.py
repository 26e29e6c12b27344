"""Shared pieces for the tracer's unit tests: a store on a controllable clock, objects."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from simkube.trace import ObjectRef, TraceHeader, TrackedKind
from simkube.tracer.config import Retention
from simkube.tracer.store import Store


class Clock:
    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def tick(self, seconds: float = 1.0) -> None:
        self.now += seconds


HEADER = TraceHeader(source_cluster="test", tracked_kinds=(
    TrackedKind(kind_key="apps/v1.Deployment", pod_template_paths=("/spec/template",)),
    TrackedKind(kind_key="v1.Pod")))


def obj(kind: str, name: str, namespace: str = "ns", **extra: Any) -> dict[str, Any]:
    api_version, _, kind_name = kind.rpartition(".")
    meta: dict[str, Any] = {"name": name, **extra.pop("metadata", {})}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": api_version, "kind": kind_name, "metadata": meta, **extra}


def ref(kind: str, name: str, namespace: str = "ns") -> ObjectRef:
    return ObjectRef.of(obj(kind, name, namespace))


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def open_store(tmp_path: Path, clock: Clock) -> Iterator[Any]:
    stores: list[Store] = []

    def make(*, retention: Retention | None = None, segment_bytes: int = 64 * 2**20,
             directory: Path | None = None) -> Store:
        store = Store(directory or tmp_path / "store", header=HEADER,
                      retention=retention or Retention(max_age_seconds=0, max_bytes=0),
                      segment_bytes=segment_bytes, clock=clock)
        stores.append(store)
        return store

    yield make
    for store in stores:
        store.close()
