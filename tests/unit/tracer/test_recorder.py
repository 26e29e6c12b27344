from __future__ import annotations

from collections.abc import Callable

import pytest

from simkube.trace import ObjectRef
from simkube.tracer.config import KindConfig, SecretPolicy
from simkube.tracer.kinds import parse_kind_key
from simkube.tracer.lifecycles import LifecycleTracker
from simkube.tracer.recorder import Listed, Observed, Recorder
from simkube.tracer.status import KindStatus
from simkube.tracer.store import Store
from tests.unit.tracer.conftest import obj, ref

pytestmark = pytest.mark.unit
OpenStore = Callable[..., Store]
PODS = KindConfig(kind=parse_kind_key("v1.Pod"), exclude_namespaces=frozenset({"skip"}))


def seen(kind: KindConfig, status: KindStatus, *names: tuple[str, str]) -> Listed:
    return Listed(kind=kind, status=status,
                  seen=frozenset(ObjectRef.of(obj("v1.Pod", n, ns)) for n, ns in names))


def test_records_changes_counts_them_and_turns_a_list_into_deletions(
        open_store: OpenStore) -> None:
    store = open_store()
    recorder = Recorder(store, secrets=SecretPolicy.REDACT, lifecycles=None)
    status = KindStatus(kind="v1.Pod")
    for name in ("a", "b"):
        recorder.handle(Observed(kind=PODS, status=status, obj=obj("v1.Pod", name),
                                 ancestors=(), record=True))
    recorder.handle(Observed(kind=PODS, status=status,
                             obj=obj("v1.Pod", "a", status={"phase": "Running"}),
                             ancestors=(), record=True))
    recorder.handle(Observed(kind=PODS, status=status, obj=obj("v1.Pod", "x", "skip"),
                             ancestors=(), record=True))
    assert status.events_stored == 2
    recorder.handle(seen(PODS, status, ("a", "ns")))  # b was deleted while away
    assert set(store.live) == {ref("v1.Pod", "a")}
    assert status.events_stored == 3
    recorder.handle(Observed(kind=PODS, status=status, obj=obj("v1.Pod", "a"), ancestors=(),
                             record=True, deleted=True))
    assert not store.live
    assert status.events_stored == 4


def test_skip_owned_secrets_and_lifecycle_only_pods(open_store: OpenStore) -> None:
    store = open_store()
    running = store.running
    lifecycles = LifecycleTracker(lifecycle_kinds=frozenset({"apps/v1.Deployment"}),
                                  running=running)
    recorder = Recorder(store, secrets=SecretPolicy.SKIP, lifecycles=lifecycles)
    status = KindStatus(kind="v1.Pod")
    skip_owned = KindConfig(kind=parse_kind_key("v1.Pod"), skip_owned=True)
    owned = obj("v1.Pod", "p", metadata={"uid": "u", "ownerReferences": [{"name": "rs"}]},
                status={"phase": "Running", "startTime": "2023-11-14T22:13:20Z"})
    chain = (ref("apps/v1.ReplicaSet", "rs"), ref("apps/v1.Deployment", "web"))
    recorder.handle(Observed(kind=skip_owned, status=status, obj=owned, ancestors=chain,
                             record=True))
    assert not store.live  # owned: skipped
    assert set(running) == {"u"}  # but its run is known
    recorder.handle(Observed(kind=PODS, status=status, obj=owned, ancestors=chain,
                             record=False, deleted=True))
    assert not running
    secrets = KindConfig(kind=parse_kind_key("v1.Secret"))
    recorder.handle(Observed(kind=secrets, status=status, obj=obj("v1.Secret", "s"),
                             ancestors=(), record=True))
    assert not store.live
    assert status.events_stored == 0
