"""A readiness probe answered at most once per interval, so probes and scrapes cannot pile up."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

T = TypeVar("T")

PROBE_SECONDS = 2.0
"""How long one probe waits for a service to answer (the callers' own timeouts use it)."""
CACHE_SECONDS = 1.0
"""How long a probe's answer is reused."""


class CachedProbe(Generic[T]):
    """``await probe()``: ``check()``'s answer, reused for ``cache_seconds``; :meth:`forget` drops it."""

    def __init__(self, check: Callable[[], Awaitable[T]], cache_seconds: float = CACHE_SECONDS) -> None:
        self._check = check
        self.cache_seconds = cache_seconds
        self._answered: tuple[float, T] | None = None

    async def __call__(self) -> T:
        now = time.monotonic()
        if self._answered is not None and now - self._answered[0] < self.cache_seconds:
            return self._answered[1]
        answer = await self._check()
        self._answered = (now, answer)
        return answer

    def forget(self) -> None:
        """The next call probes again (a state change the cached answer does not know of)."""
        self._answered = None
