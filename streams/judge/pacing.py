"""How many judge calls are open at once, and how fast new ones start: the two caps that keep a flood
of drafts from becoming a bill (``EC_SEMANTIC__MAX_IN_FLIGHT``, ``EC_SEMANTIC__CALLS_PER_SECOND``)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable


class Pacing:
    """At most ``max_in_flight`` calls open, and their starts at least ``1 / calls_per_second`` apart
    (every try counts: a retry is a call the API bills too)."""

    def __init__(
        self, max_in_flight: int, calls_per_second: float, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._slots = asyncio.Semaphore(max_in_flight)
        self._spacing = 1.0 / calls_per_second
        self._next_start = 0.0
        self._clock = clock
        self.in_flight = 0
        """Calls open now."""
        self.started = 0
        """Calls started so far."""

    @contextlib.asynccontextmanager
    async def call(self) -> AsyncIterator[None]:
        """Hold one slot for one call, started no sooner than the rate allows."""
        async with self._slots:
            now = self._clock()
            start = max(now, self._next_start)
            self._next_start = start + self._spacing
            if start > now:
                await asyncio.sleep(start - now)
            self.in_flight += 1
            self.started += 1
            try:
                yield
            finally:
                self.in_flight -= 1
