"""A change signal many tasks can wait on, re-armed at every change.

``asyncio.Event`` wakes waiters once and then stays set; the clock (pause, resume) and the
simulation (progress) need "wake everyone waiting now, then be ready for the next change".
"""

from __future__ import annotations

import asyncio


class Signal:
    def __init__(self) -> None:
        self._event = asyncio.Event()

    def fire(self) -> None:
        """Wake every current waiter; later waiters wait for the next ``fire``."""
        event, self._event = self._event, asyncio.Event()
        event.set()

    def arm(self) -> asyncio.Event:
        """The event the next ``fire`` sets: take it before checking state, then wait on it,
        so a change between the check and the wait is not missed."""
        return self._event
