"""The single consumer between the watchers and the store: decides what is recorded.

Watchers of every kind feed one bounded queue, so the store has one writer and events keep
the order in which they were observed; a slow disk slows the watchers (the queue fills)
instead of growing memory. For each observation the recorder updates pod lifecycles, applies
the kind's filters (namespaces, ``skipOwned``), sanitises, and lets the store record only
real differences. The end of a (re-)list turns every live object the list did not return
into a deletion, recorded at that moment: a delete that happened while the tracer was away.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from simkube.core.logs import get_logger
from simkube.trace import KubeObject, ObjectRef
from simkube.tracer.config import KindConfig, SecretPolicy
from simkube.tracer.lifecycles import LifecycleTracker
from simkube.tracer.sanitising import sanitise
from simkube.tracer.segments import Ancestors
from simkube.tracer.status import KindStatus
from simkube.tracer.store import Store

log = get_logger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class Observed:
    """An object as listed or watched (``deleted``: a watch DELETED event)."""

    kind: KindConfig
    status: KindStatus
    obj: KubeObject
    ancestors: Ancestors
    record: bool  # False for pods watched only for lifecycles
    deleted: bool = False
    node_type: str | None = None  # a started pod's node's instance type, when known


@dataclass(frozen=True, slots=True, kw_only=True)
class Listed:
    """A complete list of the kind ended; ``seen`` is every object it returned."""

    kind: KindConfig
    status: KindStatus
    seen: frozenset[ObjectRef]


Message = Observed | Listed


class Recorder:
    def __init__(self, store: Store, *, secrets: SecretPolicy,
                 lifecycles: LifecycleTracker | None, queue_size: int = 10_000) -> None:
        self.store = store
        self.queue: asyncio.Queue[Message] = asyncio.Queue(maxsize=queue_size)
        self._secrets = secrets
        self._lifecycles = lifecycles

    async def run(self) -> None:
        while True:
            message = await self.queue.get()
            try:
                self.handle(message)
            except Exception:  # one bad object must not stop recording
                log.exception("recording failed", kind=message.kind.kind.key)
            finally:
                self.queue.task_done()

    def handle(self, message: Message) -> None:
        if isinstance(message, Listed):
            self._listed(message)
            return
        obj, kind = message.obj, message.kind
        metadata = obj.get("metadata") or {}
        if self._lifecycles is not None and obj.get("kind") == "Pod":
            fact = self._lifecycles.observe(obj, message.ancestors, now_ms=self.store.now_ms(),
                                            deleted=message.deleted,
                                            node_type=message.node_type)
            if fact is not None:
                self.store.record_run(fact)
        if not message.record or not metadata.get("name"):
            return
        ref = ObjectRef.of(obj)
        if message.deleted:
            if self.store.delete(ref):
                self._count(message.status)
            return
        if not kind.in_scope(ref.namespace) or (kind.skip_owned
                                                 and metadata.get("ownerReferences")):
            return
        clean = sanitise(obj, secrets=self._secrets)
        if clean is not None and self.store.apply(ref, clean, ancestors=message.ancestors):
            self._count(message.status)

    def _listed(self, message: Listed) -> None:
        for ref in self.store.refs_of(message.kind.kind.key):
            if ref not in message.seen and message.kind.in_scope(ref.namespace):
                self.store.delete(ref)
                self._count(message.status)

    def _count(self, status: KindStatus) -> None:
        status.events_stored += 1
        status.last_event_ms = self.store.now_ms()
