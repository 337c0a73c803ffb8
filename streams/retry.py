"""The one retry policy: exponential backoff while the error tree says ``retriable``, for a bounded time.

Every loop that waits out an outage (the agents' batches, the audit sink, the worker's and the
gateway's start-up) runs through :func:`hold`, so they back off, log and give up the same way; their
policies come from :meth:`RetryPolicy.from_settings` or :meth:`RetryPolicy.for_startup`. One-shot
commands such as ``publish`` do not wait: they fail at once with the error.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from streams.errors import EvidenceChainError, HoldExpired, HoldInterrupted

if TYPE_CHECKING:
    from streams.settings import Settings

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Exponential backoff from ``initial_seconds`` to ``max_seconds``; give up after ``max_hold_seconds``.

    ``max_hold_seconds=None`` holds for as long as it takes.
    """

    initial_seconds: float = 0.2
    max_seconds: float = 10.0
    max_hold_seconds: float | None = 300.0

    @classmethod
    def from_settings(cls, settings: Settings, *, forever: bool = False) -> RetryPolicy:
        """The policy of ``EC_RETRY_INITIAL_BACKOFF_MS``, ``_MAX_BACKOFF_MS`` and ``EC_MAX_HOLD_SECONDS``.

        ``forever`` ignores ``EC_MAX_HOLD_SECONDS``: for a process with nothing to hand back (the audit
        sink), which waits out an outage for as long as it lasts.
        """
        return cls(
            settings.retry_initial_backoff_ms / 1000,
            settings.retry_max_backoff_ms / 1000,
            None if forever else settings.max_hold_seconds,
        )

    @classmethod
    def for_startup(cls, settings: Settings) -> RetryPolicy:
        """For a server that is still starting: retries 0.5 s to 5 s apart for ``EC_STARTUP_WAIT_SECONDS``."""
        return cls(0.5, 5.0, max(settings.startup_wait_seconds, 0.1))

    def delays(self) -> Iterator[float]:
        """Endless delays: initial, doubled each time, capped at max."""
        delay = self.initial_seconds
        while True:
            yield delay
            delay = min(delay * 2, self.max_seconds)


HoldListener = Callable[[float | None, str | None], None]
"""Told how long the current operation has been held so far (from 0.0 on its first failure) and why
(what failed and the error), and ``(None, None)`` once it succeeded after being held."""


async def hold(
    operation: Callable[[], Awaitable[T]],
    *,
    what: str,
    policy: RetryPolicy,
    stop: asyncio.Event | None = None,
    on_hold: HoldListener | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> T:
    """Run ``operation`` until it succeeds, backing off while it fails with a retriable error.

    Only errors whose ``retriable`` flag is true are retried; anything else propagates at once.

    Raises:
        HoldExpired: the operation kept failing for longer than ``policy.max_hold_seconds``.
        HoldInterrupted: ``stop`` was set while waiting to retry.
    """
    started: float | None = None
    attempts = 0
    for delay in policy.delays():
        try:
            result = await operation()
        except EvidenceChainError as exc:
            if not exc.retriable:
                raise
            now = clock()
            started = now if started is None else started
            held = now - started
            if on_hold is not None:
                on_hold(held, f"{what}: {exc}")
            if policy.max_hold_seconds is not None and held + delay > policy.max_hold_seconds:
                raise HoldExpired(
                    f"{what}: still failing after {held:.0f}s ({exc}); EC_MAX_HOLD_SECONDS="
                    f"{policy.max_hold_seconds:g} reached, giving up so a supervisor can restart the worker"
                ) from exc
            attempts += 1
            # a server that says when to come back (HTTP 429/503 Retry-After) is taken at its word
            delay = max(delay, getattr(exc, "retry_after_seconds", None) or 0.0)
            log.warning("%s failed (%s); holding the batch, retry %d in %.1fs", what, exc, attempts, delay)
            if stop is None:
                await asyncio.sleep(delay)
            else:
                try:
                    await asyncio.wait_for(stop.wait(), delay)
                except TimeoutError:
                    pass
                else:
                    raise HoldInterrupted(f"{what}: stopped while holding") from exc
            continue
        if attempts:
            log.warning("%s succeeded after %d retries; releasing the batch", what, attempts)
            if on_hold is not None:
                on_hold(None, None)
        return result
    raise AssertionError("unreachable: policy.delays() is endless")  # pragma: no cover
