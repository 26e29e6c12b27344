"""Applying and deleting single objects: server-side apply, bounded concurrency, retries.

Each object is applied with server-side apply under one field manager (``force`` so the
driver's intent always wins over anything else that touched the object). Three rules keep a
replay faithful:
- at most ``concurrency`` requests are in flight, so a huge event cannot swamp the API
  server, but operations never wait for their event's siblings;
- operations on the same object run in trace order, even when an earlier one is retrying;
- transient errors (no answer, 429, 5xx, a namespace's ServiceAccount not there yet, a kind
  whose CRD is still being established) are retried with exponential backoff for up to
  ``retry_deadline_s``; anything else (invalid, forbidden, ...) is returned at once as a
  ``FailureRecord`` and the replay goes on. Deleting an object that is already gone succeeds.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

from simkube.core.kubeapi import APPLY_PATCH, ApiError, Discovery, KindNotServedError, KubeClient
from simkube.driver.names import FIELD_MANAGER
from simkube.driver.namespaces import Namespaces
from simkube.driver.progress import FailureRecord, Operation
from simkube.driver.rewriting import Rewriter
from simkube.trace import KubeObject, ObjectRef, TraceFormatError

APPLY_QUERY = {"fieldManager": FIELD_MANAGER, "force": "true"}
DELETE_BODY = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Background"}
FIRST_BACKOFF = 0.1
MAX_BACKOFF = 5.0

Started = Callable[[], None]
# Told of every successful apply: the object as the trace has it, the cluster's answer (with
# its uid), and the event's trace offset; and of every delete. The CronJob firer listens.
Applied = Callable[[KubeObject, KubeObject, int], None]
Deleted = Callable[[ObjectRef], None]
# Awaited with each object (as the trace has it) and its event's trace offset before the
# object's first apply attempt, in the object's own order. Scale-down victims are marked so.
BeforeApply = Callable[[KubeObject, int], Awaitable[None]]


async def _nothing_before(obj: KubeObject, offset_ms: int) -> None:
    return None


class Applier:
    def __init__(self, *, kube: KubeClient, discovery: Discovery, rewriter: Rewriter,
                 namespaces: Namespaces, concurrency: int, retry_deadline_s: float,
                 first_backoff_s: float = FIRST_BACKOFF,
                 applied: Applied = lambda original, stored, offset_ms: None,
                 deleted: Deleted = lambda ref: None,
                 before_apply: BeforeApply = _nothing_before) -> None:
        self._kube = kube
        self._discovery = discovery
        self._rewriter = rewriter
        self._namespaces = namespaces
        self._slots = asyncio.Semaphore(concurrency)
        self._retry_deadline = retry_deadline_s
        self._first_backoff = first_backoff_s
        self._tails: dict[ObjectRef, asyncio.Future[None]] = {}
        self._applied = applied
        self._deleted = deleted
        self._before_apply = before_apply

    async def apply(self, obj: KubeObject, *, offset_ms: int,
                    started: Started = lambda: None) -> FailureRecord | None:
        """Apply ``obj`` (as the trace has it); None on success."""
        ref = ObjectRef.of(obj)
        described = [str(ref)]

        async def attempt() -> None:
            resource = await self._discovery.resource(api_version=ref.api_version,
                                                      kind=ref.kind)
            try:
                body = self._rewriter.rewrite(obj, namespaced=resource.namespaced)
            except TraceFormatError as exc:  # a field of the wrong type; names it
                raise ApiError(code=0, reason="BadObject", retry=False,
                               message=f"the object cannot be rewritten: {exc.what}") from None
            target = self._rewriter.target(ref, namespaced=resource.namespaced)
            described[0] = str(target)
            if target.namespace:
                await self._namespaces.ensure(target.namespace)
            try:
                stored = await self._kube.request(
                    "PATCH", resource.path(name=target.name, namespace=target.namespace),
                    body=body, query=APPLY_QUERY, content_type=APPLY_PATCH)
            except ApiError as exc:
                if exc.code == 404 and target.namespace and exc.message.startswith(
                        f'namespaces "{target.namespace}"'):
                    # The trace deleted the namespace and it has just finished terminating:
                    # create it again on the next attempt.
                    self._namespaces.forget(target.namespace)
                    raise ApiError(code=exc.code, reason=exc.reason, message=exc.message,
                                   retry=True) from None
                raise
            self._applied(obj, stored, offset_ms)
        async with self._in_order(ref):
            await self._before_apply(obj, offset_ms)
            return await self._run(Operation.APPLY, described, offset_ms, started, attempt)

    async def delete(self, obj: KubeObject, *, offset_ms: int,
                     started: Started = lambda: None) -> FailureRecord | None:
        """Delete the object ``obj`` names (as the trace has it); gone already is fine."""
        ref = ObjectRef.of(obj)
        described = [str(ref)]

        async def attempt() -> None:
            try:
                resource = await self._discovery.resource(api_version=ref.api_version,
                                                          kind=ref.kind)
            except KindNotServedError:
                return  # no such kind here, so no such object either
            target = self._rewriter.target(ref, namespaced=resource.namespaced)
            described[0] = str(target)
            try:
                await self._kube.request("DELETE", resource.path(name=target.name,
                                                                 namespace=target.namespace),
                                         body=DELETE_BODY)
            except ApiError as exc:
                if exc.code != 404:
                    raise
            if ref.kind == "Namespace" and ref.api_version == "v1":
                self._namespaces.forget(target.name)
            self._deleted(ref)
        async with self._in_order(ref):
            return await self._run(Operation.DELETE, described, offset_ms, started, attempt)

    async def _run(self, operation: Operation, described: list[str], offset_ms: int,
                   started: Started, attempt: Callable[[], Awaitable[None]],
                   ) -> FailureRecord | None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._retry_deadline
        backoff = self._first_backoff
        attempts = 0
        while True:
            attempts += 1
            async with self._slots:
                if attempts == 1:
                    started()
                try:
                    await attempt()
                except ApiError as exc:
                    error = exc
                else:
                    return None
            if not error.transient or loop.time() + backoff > deadline:
                return FailureRecord(trace_offset_ms=offset_ms, operation=operation,
                                     object=described[0], code=error.code, reason=error.reason,
                                     message=error.message, attempts=attempts)
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF)

    @contextlib.asynccontextmanager
    async def _in_order(self, ref: ObjectRef) -> AsyncIterator[None]:
        """Run after every earlier operation on ``ref`` has finished."""
        previous = self._tails.get(ref)
        mine: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._tails[ref] = mine
        try:
            if previous is not None and not previous.done():
                await asyncio.wait({previous})
            yield
        finally:
            mine.set_result(None)
            if self._tails.get(ref) is mine:
                del self._tails[ref]

