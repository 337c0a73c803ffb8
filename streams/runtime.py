"""What the agents share at the edge: consumed records, outbound messages, the sink, retry-and-hold.

Infrastructure failures (Kafka or Redis unreachable) are retried in place with backoff: the batch
is held, nothing is acknowledged, nothing is dead-lettered, so no record is lost.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from models.events import Origin
from streams.envelope import origin_of
from streams.errors import InfrastructureError

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Record:
    """One consumed Kafka record, reduced to what the stations need."""

    topic: str
    partition: int
    offset: int
    timestamp: int | None
    key: bytes | None
    value: bytes

    @property
    def coordinates(self) -> Origin:
        """This record as an origin (``{topic, partition, offset, timestamp}``)."""
        return origin_of(self.topic, self.partition, self.offset, self.timestamp)

    @property
    def where(self) -> str:
        """``topic[partition]@offset``, for messages."""
        return f"{self.topic}[{self.partition}]@{self.offset}"


@dataclass(frozen=True, slots=True)
class Outbound:
    """One message to produce; ``key`` is the run id so a run stays in one partition number."""

    topic: str
    key: bytes | None
    value: bytes


class Sink(Protocol):
    """Produces messages and returns only once every one is acknowledged by the broker (acks=all)."""

    async def send_all(self, messages: Sequence[Outbound]) -> None:
        """Deliver all messages.

        Raises:
            KafkaUnavailable: some message was not acknowledged; the caller retries the batch.
        """
        ...


@dataclass(frozen=True, slots=True)
class Backoff:
    """Exponential backoff for retry-and-hold."""

    initial_seconds: float = 0.2
    max_seconds: float = 10.0

    def delays(self) -> Any:
        """Endless delays: initial, doubled each time, capped at max."""
        delay = self.initial_seconds
        while True:
            yield delay
            delay = min(delay * 2, self.max_seconds)


async def hold_until_done(operation: Callable[[], Awaitable[T]], *, what: str, backoff: Backoff) -> T:
    """Run ``operation`` until it succeeds, sleeping between tries while the infrastructure is down.

    Only :class:`InfrastructureError` is retried; anything else propagates.
    """
    attempts = 0
    for delay in backoff.delays():
        try:
            result = await operation()
        except InfrastructureError as exc:
            attempts += 1
            log.warning("%s failed (%s); holding the batch, retry %d in %.1fs", what, exc, attempts, delay)
            await asyncio.sleep(delay)
            continue
        if attempts:
            log.warning("%s succeeded after %d retries; releasing the batch", what, attempts)
        return result
    raise AssertionError("unreachable: backoff.delays() is endless")  # pragma: no cover
