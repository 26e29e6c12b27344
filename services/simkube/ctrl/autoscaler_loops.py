"""How many loops the autoscaler has started and finished, from its Prometheus metrics.

CA records ``cluster_autoscaler_function_duration_seconds`` per function on its metrics
port (``--address``): the ``loopWait`` sample is observed as each loop starts (the wait before
it), the ``main`` sample as each loop finishes, failed ones included. Their ``_count`` series
are therefore "loops started" and "loops finished"; a loop that started after some moment has
finished once ``finished`` exceeds the ``started`` read at that moment. Both reset to zero when
CA restarts (sk-ctrl restarts it for every run's timers).

A CA started with ``--frequent-loops-enabled=false`` (as a held replay's is:
``core/replay_flags.py``) never waits on its loop trigger, so ``loopWait`` is never observed.
Then only finished loops are counted, and a loop may be running at the moment of reading: the
second loop to finish after it is the first known to have started after it
(``LoopCounts.after_now``). CA's ``last_activity`` gauge has the start of the latest loop,
but only to the second, too coarse to tell.

Karpenter's loop is its provisioner's pass (wait for a pod's trigger, batch, simulate
scheduling, create NodeClaims). Upstream counts no passes, so the project's Karpenter build
does (``env/toolchain/karpenter/passes.go``): ``simkube_karpenter_provisioner_passes_total``
with ``phase="started"`` and ``phase="finished"``, read as CA's two counters are, with the
same rule: the pass after the one in progress is the first known to see a pod made pending
now.

CA's ``cluster_autoscaler_scaled_up_nodes_total`` (summed over its labels) is read beside
them: production's CA starts its next loop at once after a loop that scaled up
(``loop/trigger.go``), which the scale-up gate plays (``scale_up_gate.py``).

The page is tens of kilobytes of text read many times a second during a hold, so only the
counters' lines are looked at, not parsed as a whole.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

import httpx

READ_TIMEOUT = 0.5  # an autoscaler that cannot answer this fast is no reason to hold a run
COUNT_METRIC = "cluster_autoscaler_function_duration_seconds_count"
_LINE = re.compile(rf"^{COUNT_METRIC}\{{([^}}]*)\}}\s+(\S+)", re.MULTILINE)
_FUNCTION = re.compile(r'(?:^|,)\s*function="([^"]*)"')
PASSES_METRIC = "simkube_karpenter_provisioner_passes_total"
_PASS_LINE = re.compile(rf"^{PASSES_METRIC}\{{([^}}]*)\}}\s+(\S+)", re.MULTILINE)
SCALED_UP_METRIC = "cluster_autoscaler_scaled_up_nodes_total"
_SCALED_UP_LINE = re.compile(rf"^{SCALED_UP_METRIC}(?:\{{[^}}]*\}})?\s+(\S+)", re.MULTILINE)
_PHASE = re.compile(r'(?:^|,)\s*phase="([^"]*)"')


class LoopFunction(StrEnum):
    """The ``function`` label values that count loops."""

    STARTED = "loopWait"
    FINISHED = "main"


class PassPhase(StrEnum):
    """The ``phase`` label values of the Karpenter build's pass counter."""

    STARTED = "started"
    FINISHED = "finished"


class LoopsUnavailableError(Exception):
    """The autoscaler's metrics could not be read."""


@dataclass(frozen=True, kw_only=True)
class LoopCounts:
    started: int
    finished: int
    scaled_up: int = 0  # nodes CA has added (0 for Karpenter)

    def after_now(self) -> int:
        """The count of finished loops that means a loop started after this reading has
        finished."""
        if self.started:
            return self.started + 1
        return self.finished + 2  # loops not triggered: one may be running now


def _counts(text: str, *, line: re.Pattern[str], label: re.Pattern[str],
            metric: str, names: tuple[str, str]) -> dict[str, int]:
    found: dict[str, int] = {}
    for labels, value in line.findall(text):
        name = label.search(labels)
        if name is not None and name.group(1) in names:
            try:
                found[name.group(1)] = int(float(value))
            except ValueError:
                raise LoopsUnavailableError(f"{metric} {value!r} is not a number") from None
    return found


def parse_loop_counts(text: str) -> LoopCounts:
    """CA's two counters, or the Karpenter build's passes, in a Prometheus text page."""
    passes = _counts(text, line=_PASS_LINE, label=_PHASE, metric=PASSES_METRIC,
                     names=(PassPhase.STARTED, PassPhase.FINISHED))
    if passes:
        return LoopCounts(started=passes.get(PassPhase.STARTED, 0),
                          finished=passes.get(PassPhase.FINISHED, 0))
    found = _counts(text, line=_LINE, label=_FUNCTION, metric=COUNT_METRIC,
                    names=(LoopFunction.STARTED, LoopFunction.FINISHED))
    try:
        scaled_up = sum(int(float(value)) for value in _SCALED_UP_LINE.findall(text))
    except ValueError:
        raise LoopsUnavailableError(f"{SCALED_UP_METRIC} is not a number") from None
    # CA registers the series on the first observation: no loop has finished yet.
    return LoopCounts(started=found.get(LoopFunction.STARTED, 0),
                      finished=found.get(LoopFunction.FINISHED, 0), scaled_up=scaled_up)


class LoopSource(Protocol):
    """Where the counters come from (``AutoscalerMetrics``; a fake in the tests)."""

    async def read(self) -> LoopCounts: ...


async def next_loop_finished(loops: LoopSource, *, bound_s: float, poll_s: float = 0.03,
                             monotonic: Callable[[], float] = time.monotonic
                             ) -> LoopCounts | None:
    """Until a loop that started after this call has finished: the counters then; None when
    ``bound_s`` wall seconds have passed or the counters cannot be read. A restart of the
    autoscaler (its counters fall) ends the wait too: the loop waited for is gone."""
    deadline = monotonic() + bound_s
    try:
        target = (await loops.read()).after_now()
        last = -1
        while monotonic() < deadline:
            counts = await loops.read()
            if counts.finished >= target or counts.finished < last:
                return counts
            last = counts.finished
            await asyncio.sleep(poll_s)
    except LoopsUnavailableError:
        return None
    return None


class AutoscalerMetrics:
    """The autoscaler's ``/metrics`` at ``url``, read over one kept-alive connection."""

    def __init__(self, *, url: str, timeout: float = READ_TIMEOUT) -> None:
        self.url = url
        self._client = httpx.AsyncClient(timeout=timeout)

    async def read(self) -> LoopCounts:
        try:
            response = await self._client.get(self.url)
            response.raise_for_status()
        except httpx.HTTPError as exc:
            raise LoopsUnavailableError(f"{self.url}: {exc or type(exc).__name__}") from None
        return parse_loop_counts(response.text)

    async def close(self) -> None:
        await self._client.aclose()
