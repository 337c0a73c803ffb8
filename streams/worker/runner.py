"""Run one station over one batch: station → Redis intents → outcomes → messages → delivered.

The same for all four agents, and free of Faust. In two steps, so an agent can take its next batch
while this one's acknowledgements are on their way: :meth:`BatchRunner.start` runs the station, makes
the Redis effects durable and hands the messages to the producer (in batch order: the producer keeps
that order per partition); :meth:`Started.delivered` returns once the broker acknowledged every
message (acks=all). :meth:`BatchRunner.run` is both at once. An outage (a retriable error) holds the
batch and retries it (``streams.retry``: a send that was not acknowledged is sent again, whole);
anything else propagates, and the caller exits without committing (crash-only).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar

from models.ledger import LedgerEntry, WriteResult
from models.vocab import Station
from streams.ledger.store import LedgerStore
from streams.messages import Output, Record
from streams.observe.tracing import Tracer
from streams.pipeline import (
    Outcome,
    PendingRead,
    PendingWrite,
    StationRules,
    Step,
    emissions,
    finish_write,
    resolve_reads,
    run_station,
)
from streams.retry import HoldListener, RetryPolicy, hold
from streams.settings import Settings
from streams.stations.ledger_view import LedgerKey, LedgerLookup
from streams.stations.publish import ReportClaim

T = TypeVar("T")


class Sink(Protocol):
    """Produces messages and returns only once every one is acknowledged by the broker (acks=all)."""

    async def send_all(self, messages: Sequence[Output]) -> None:
        """Deliver all messages.

        Raises:
            KafkaUnavailable: some message was not acknowledged; the caller retries the batch.
            KafkaRefused: the broker refused for good.
        """
        ...


class SubmittingSink(Sink, Protocol):
    """A sink that can hand messages to the producer now and be waited on for their acks later."""

    async def submit(self, messages: Sequence[Output]) -> Awaitable[None]:
        """Queue every message in order; the returned awaitable ends once every one is acknowledged.

        Raises:
            KafkaUnavailable, KafkaRefused: queueing failed (and so does awaiting the result).
        """
        ...


def retrieved(future: asyncio.Future[Any]) -> None:
    """A done callback that marks a background future's error as seen (it is raised where the future is
    awaited, or read again where it is needed), so asyncio never logs it as never retrieved."""
    if not future.cancelled():
        future.exception()


def wall_clock() -> str:
    """``processed_at``: the only wall-clock value anywhere (audit records)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass(frozen=True, slots=True, kw_only=True)
class RunnerConfig:
    """What a runner reads besides its station, sink and store: the stations' rules and how long an outage
    is held. Built once by the worker (:meth:`from_settings`) and shared by its runners."""

    rules: StationRules
    policy: RetryPolicy
    """Backoff while Redis or the broker is out, and how long a batch is held before the worker exits."""

    @classmethod
    def from_settings(cls, settings: Settings, rules: StationRules | None = None) -> RunnerConfig:
        """The config of ``settings``: ``rules`` when given (built once for the process), else built here.

        Raises:
            ConfigurationError: the rules' key files cannot be read (:meth:`StationRules.from_settings`).
        """
        rules = rules or StationRules.from_settings(settings)
        return cls(rules=rules, policy=RetryPolicy.from_settings(settings))


class BatchRunner:
    """One station's batches: at most one Redis round trip of writes (ledger), or two of reads and one of
    report claims (guard)."""

    def __init__(
        self,
        station: Station,
        config: RunnerConfig,
        sink: Sink,
        store: LedgerStore | None = None,
        *,
        clock: Callable[[], str] = wall_clock,
        on_hold: HoldListener | None = None,
        tracer: Tracer | None = None,
    ) -> None:
        if station in (Station.LEDGER, Station.GUARD) and store is None:
            raise ValueError(f"the {station} station needs a ledger store")
        self.station = station
        self.rules = config.rules
        self.sink = sink
        self.store = store
        self.policy = config.policy
        self.clock = clock
        self.on_hold = on_hold
        self.on_progress: Callable[[], None] | None = None
        """Called when a batch in the making moves on without finishing (the semantic runner: each judge
        call that answers): the agent's loop counts it as progress, so a slow batch is not a stall."""
        self.tracer = tracer or Tracer()
        self.redis_seconds = 0.0
        """Wall seconds spent in Redis round trips (holds included) so far."""

    async def run(self, records: Sequence[Record]) -> list[Outcome[Any]]:
        """Process one batch; returns its outcomes once all its effects are done."""
        started = await self.start(records)
        await started.delivered()
        return started.outcomes

    async def start(self, records: Sequence[Record]) -> Started:
        """The station over the batch, its Redis effects durable, its messages handed to the producer.

        What is left — the broker's acknowledgements — is :meth:`Started.delivered`.
        """
        spans = self.tracer.records(records)
        try:
            steps = [run_station(self.station, record, self.rules) for record in records]
            outcomes = await self._resolve(records, steps)
            processed_at = self.clock()
            messages: list[Output] = []
            for i, (record, outcome) in enumerate(zip(records, outcomes, strict=True)):
                made = emissions(outcome, record, self.rules, processed_at)
                messages += self.tracer.carry(spans[i], made) if spans else made
            acks = await self._submit(messages) if messages else None
        except BaseException as exc:
            self.tracer.end(spans, exc)
            raise
        return Started(self, outcomes, messages, acks, spans)

    async def _submit(self, messages: list[Output]) -> Awaitable[None] | None:
        """Hand the messages to the producer now, if the sink can (else they are sent when awaited)."""
        submit = getattr(self.sink, "submit", None)
        if submit is None:
            return None
        acks: asyncio.Future[None] = asyncio.ensure_future(
            await self.held(lambda: submit(messages), f"{self.station}: sending {len(messages)} messages")
        )
        acks.add_done_callback(retrieved)  # awaited by delivered(), unless a batch before it failed
        return acks

    async def _resolve(self, records: Sequence[Record], steps: list[Step]) -> list[Outcome[Any]]:
        done = [s for s in steps if isinstance(s, Outcome)]
        if len(done) == len(steps):  # no Redis effect in this batch
            return done
        started = time.monotonic()
        try:
            return await self._resolve_now(records, steps)
        finally:
            self.redis_seconds += time.monotonic() - started

    async def _resolve_now(self, records: Sequence[Record], steps: list[Step]) -> list[Outcome[Any]]:
        writes = [(i, s) for i, s in enumerate(steps) if isinstance(s, PendingWrite)]
        reads = [(i, s) for i, s in enumerate(steps) if isinstance(s, PendingRead)]
        out: list[Outcome[Any] | None] = [s if isinstance(s, Outcome) else None for s in steps]
        if writes:
            store = self._store()
            entries: list[LedgerEntry] = [s.entry for _, s in writes]
            results: list[WriteResult] = []  # kept across retries: only the rest is sent again
            await self.held(
                lambda: store.write_many(entries[len(results) :], written=results),
                f"ledger: writing {len(entries)} entries",
            )
            for (i, step), result in zip(writes, results, strict=True):
                out[i] = finish_write(step, result, records[i])
        if reads:
            store = self._store()

            async def read(keys: list[LedgerKey]) -> Mapping[LedgerKey, LedgerLookup]:
                return await self.held(
                    lambda: store.read_many(keys), f"guard: reading {len(keys)} ledger entries"
                )

            async def claim(claims: list[ReportClaim]) -> list[str | None]:
                # SPEC 4.3: one report per draft; an outage holds the batch here too, never a dead letter
                return await self.held(
                    lambda: store.claim_reports(claims),
                    f"guard: claiming the reports of {len(claims)} drafts",
                )

            judged = await resolve_reads(
                [(step, records[j]) for j, step in reads], read, claim, signer=self.rules.guard.signer
            )
            for (j, _), outcome in zip(reads, judged, strict=True):
                out[j] = outcome
        return [o for o in out if o is not None]

    async def held(self, operation: Callable[[], Awaitable[T]], what: str) -> T:
        """``operation`` held through an outage by this runner's policy, each hold told to
        :attr:`on_hold` (:func:`streams.retry.hold`)."""
        return await hold(operation, what=what, policy=self.policy, on_hold=self.on_hold)

    async def in_redis(self, operation: Callable[[], Awaitable[T]], what: str) -> T:
        """One Redis round trip, :meth:`held`; its wall time (holds included) counts in
        :attr:`redis_seconds`."""
        began = time.monotonic()
        result = await self.held(operation, what)
        self.redis_seconds += time.monotonic() - began
        return result

    def round_trips(self) -> int:
        """Redis round trips of this runner's store so far (0 without a counting store)."""
        return int(getattr(self.store, "round_trips", 0))

    def _store(self) -> LedgerStore:
        if self.store is None:  # pragma: no cover - checked in __init__
            raise ValueError("no ledger store")
        return self.store


@dataclass
class Started:
    """A batch whose station ran and whose Redis effects are durable; its messages may be in flight."""

    runner: BatchRunner
    outcomes: list[Outcome[Any]]
    messages: list[Output]
    acks: Awaitable[None] | None
    """The producer's acknowledgements of the messages submitted (None: not sent yet)."""
    spans: Any

    def abandon(self) -> None:
        """Never to be delivered (a batch before it failed): its spans end with that."""
        self.runner.tracer.end(self.spans, RuntimeError("abandoned: a batch before it failed"))

    async def delivered(self) -> None:
        """Return once the broker acknowledged every message; an outage sends them all again.

        Raises:
            HoldExpired, KafkaRefused, Exception: as :func:`streams.retry.hold` lets them through.
        """
        runner, messages = self.runner, self.messages
        pending = [self.acks] if self.acks is not None else []

        async def attempt() -> None:
            if pending:
                await pending.pop()
            else:
                await runner.sink.send_all(messages)

        try:
            if messages:
                await runner.held(attempt, f"{runner.station}: sending {len(messages)} messages")
        except BaseException as exc:
            runner.tracer.end(self.spans, exc)
            raise
        runner.tracer.end(self.spans)
