"""Explicit commits: an agent's finished offsets, through Faust's consumer, only within their generation.

Offsets are never acked through Faust (faust-streaming 0.15.3's ``Consumer._new_offset`` can commit
past an unprocessed record, and ``on_task_error`` commits; see ``docs/RELIABILITY.md``): the
:class:`~streams.worker.offsets.OffsetTracker` says what is finished, and :class:`Committer` commits
that and nothing else.

Faust internal used here, and why (pinned faust-streaming 0.15.x): ``app.consumer._commit(offsets)``
commits explicit offsets through Faust's consumer thread (the group member that owns the
partitions); Faust's public ``commit()`` only commits its own acks.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import faust
from faust.exceptions import NotReady
from faust.types import TP as FaustTP

from streams.errors import KafkaUnavailable
from streams.kafka.config import kafka_errors
from streams.retry import RetryPolicy, hold
from streams.worker.offsets import OffsetTracker

CommitFn = Callable[[dict[tuple[str, int], int]], Awaitable[bool]]
"""Commits ``{(topic, partition): offset}`` for the group; False when the group rebalanced meanwhile.

Raises the project's errors only (``KafkaUnavailable`` is retriable, ``KafkaRefused`` is not)."""


@contextlib.contextmanager
def _consumer_errors(what: str) -> Iterator[None]:
    """Faust's consumer not (yet, or any more) running is an outage of the consumer: retriable.

    Raises:
        KafkaUnavailable: Faust's consumer thread is not ready.
    """
    try:
        yield
    except NotReady as exc:
        raise KafkaUnavailable(f"{what}: {type(exc).__name__}: {exc}") from exc


def consumer_commit(app: faust.App) -> CommitFn:
    """Explicit offsets committed through Faust's consumer (the group member owning the partitions)."""

    async def commit(offsets: dict[tuple[str, int], int]) -> bool:
        consumer: Any = app.consumer
        what = f"committing the offsets of {len(offsets)} partitions"
        with kafka_errors(what), _consumer_errors(what):
            done = await consumer._commit({FaustTP(t, p): o for (t, p), o in offsets.items()})  # noqa: SLF001
        return bool(done)

    return commit


class Committer:
    """Commits an agent's finished offsets, at most every commit interval, only within their generation.

    A commit that fails for an outage (a retriable error) is held and retried by ``policy`` — the
    worker's one retry policy — and any other error propagates out of :meth:`run`, which the agent
    turns into a crash-only exit. Waiting loses nothing: uncommitted records are only read again.
    """

    def __init__(
        self,
        app: faust.App,
        tracker: OffsetTracker,
        interval_seconds: float,
        policy: RetryPolicy,
        commit: CommitFn | None = None,
        *,
        name: str = "agent",
        on_commit: Callable[[], None] | None = None,
    ) -> None:
        """``on_commit``: told after each commit that went through (the commits metric)."""
        self.app = app
        self.tracker = tracker
        self.interval = interval_seconds
        self.policy = policy
        self.commit = commit or consumer_commit(app)
        self.name = name
        self.on_commit = on_commit
        self._wake = asyncio.Event()

    def poke(self) -> None:
        """Something finished: commit soon."""
        self._wake.set()

    async def commit_now(self) -> bool:
        """Commit what moved since the last commit; False if there was nothing or the group rebalanced.

        Raises:
            KafkaUnavailable, KafkaRefused: as the commit function maps them (tried once, not held).
        """
        offsets = self.tracker.to_commit()
        if not offsets or self.tracker.generation != self.app.consumer_generation_id:
            return False
        done = await self.commit(offsets)
        if done:
            self.tracker.committed(offsets)
            if self.on_commit is not None:
                self.on_commit()
        return done

    async def run(self) -> None:
        """Commit in the background until cancelled.

        Each try commits what is finished at that moment, so a commit held for an outage takes the
        batches finished meanwhile with it.

        Raises:
            EvidenceChainError: a commit error that is not retriable, or ``HoldExpired`` when the
                policy has a limit and the outage outlasted it.
            Exception: anything unexpected (a bug): the agent exits without committing more.
        """
        while True:
            await self._wake.wait()
            await asyncio.sleep(self.interval)
            self._wake.clear()
            await hold(self.commit_now, what=f"{self.name}: committing offsets", policy=self.policy)
