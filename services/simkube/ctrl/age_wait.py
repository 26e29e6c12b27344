"""Cluster Autoscaler's pod-age wait, kept in trace time while a run's clock is held.

CA 1.36 does not scale up in a loop whose unschedulable pods are all younger than 2 s
(``unschedulablePodTimeBuffer``, ``core/static_autoscaler.go``; the age is the loop's start
less the pod's ``creationTimestamp``, whole seconds): "waiting one iteration for more". The
loop the new pods triggered skips, and the next one, one scan interval later, plans. In
production that is one scan (10 s) between the pods going pending and CA's plan, and a burst
arriving meanwhile gets one plan. The 2 s are wall time, so a replay at speed *s* that kept
them as they are would wait 2·*s* seconds of trace; one that bypassed them (the
``--bypassed-scheduler-names`` flag, core/replay_flags.py) would plan at once, a scan early.

So a held run keeps the wait and moves it out of trace time: once CA's loop that saw the pods
has finished (holding.py), the clock stays held while the pods are young in CA's eyes, and is
released just after a loop ends whose successor will see them old. That successor starts one
scan interval (CA's ``--scan-interval``, divided by the speed) after the release, i.e. one
scan interval of trace time after the pods went pending, as in production. A pod newly seen
unschedulable in the meantime triggers a loop at once, as in production.

What it does not model: CA also skips when old unschedulable pods are all ones upcoming
nodes will take; the watch only knows which pods turned unschedulable during the hold, and
judges by the oldest of those. GPU pods (30 s) are not told apart.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from simkube.ctrl.autoscaler_loops import LoopSource, LoopsUnavailableError

AGE_BUFFER_S = 2.0  # CA's unschedulablePodTimeBuffer


async def wait_out_age(*, young_until: Callable[[], float | None], loops: LoopSource,
                       scan_s: float, wall: Callable[[], float],
                       monotonic: Callable[[], float], deadline: float,
                       poll_s: float) -> bool:
    """Until a loop has just ended whose successor sees the pods old (True), or ``deadline``
    on ``monotonic`` has passed (False). ``young_until()`` is the wall (Unix) time from which
    CA sees the pods old, None when no pod waits; ``scan_s`` CA's scan interval in wall s."""
    try:
        finished = (await loops.read()).finished
    except LoopsUnavailableError:
        return False
    ended_at = wall()  # the loop the hold waited for has just finished
    while True:
        until = young_until()
        if until is None or ended_at + scan_s >= until:
            return True  # CA's next loop (or the one that just ran) sees them old
        if monotonic() >= deadline:
            return False
        await asyncio.sleep(poll_s)
        try:
            now = (await loops.read()).finished
        except LoopsUnavailableError:
            return False
        if now < finished:  # CA restarted: it waits for nothing now
            return True
        if now > finished:
            finished, ended_at = now, wall()
