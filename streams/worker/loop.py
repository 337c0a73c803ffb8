"""One agent's loop: batches from its channel, the gap check, the station, explicit commits, crash-only.

Delivery: at-least-once with ``concurrency=1`` per agent (higher can commit past an in-flight record,
faust #606). A batch is marked finished only once its outputs are acknowledged by the broker
(acks=all) and its Redis effects are durable; only then can the
:class:`~streams.worker.commit.Committer` commit past it.

Pipelined: the station, the gap check and the Redis effects run one batch at a time, in order; the
wait for the broker's acks does not. While up to ``EC_BATCHES_IN_FLIGHT`` batches await their acks
the agent takes and processes the next. Batches finish strictly in the order they were taken — each
waits for the one before it — so a batch that is held (an outage) or fails stops the line behind it,
and nothing is ever committed past a record whose batch has not finished. Before a new group
generation the batches of the old one are waited for.

Crash-only: a batch-level error that is neither one record's fault (those are dead letters) nor a
known outage (held and retried, for at most ``EC_MAX_HOLD_SECONDS``) makes the process exit with
status 70 at once (:func:`~streams.worker.crash.crash`), without committing the batch and without
Faust's in-process agent restart; the loop never raises into Faust's supervisor, and its safety does
not rest on Faust's ``on_task_error`` (which commits).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import faust

from models.topology import TOPOLOGY
from models.vocab import Station
from streams.errors import RecordsSkipped
from streams.kafka.offsets import OffsetProbe
from streams.messages import Record
from streams.observe.logs import record_fields
from streams.observe.metrics import WorkerMetrics
from streams.pipeline import Outcome
from streams.retry import RetryPolicy, hold
from streams.settings import Settings
from streams.worker.batches import batches, to_record
from streams.worker.commit import CommitFn, Committer
from streams.worker.crash import crash
from streams.worker.offsets import OffsetTracker
from streams.worker.runner import BatchRunner, Started, retrieved

log = logging.getLogger(__name__)

Committed = dict[tuple[str, int], int | None]
"""The group's committed offset of each partition (None: it has none)."""

SETTLE_SECONDS = 0.05
"""Longest an agent with a batch in flight waits for it before taking a thin next batch (see
:meth:`AgentLoop.settle`)."""

SETTLE_ON_STOP_SECONDS = 5.0
"""Longest a stopping agent waits for its batches in flight before it commits and drops the rest."""

POSITION_PROBE_SECONDS = 0.5
"""How long ``/livez`` waits for the consumer's position of a partition the agent has taken nothing
from (the consumer asks the broker for it; a dead broker must not hang the probe)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LoopConfig:
    """What an agent's loop reads besides its runner: its input topic, how it batches, how it holds and
    commits. Built once per agent by the worker (:meth:`from_settings`)."""

    input_topic: str
    """The full name of the agent's input topic (the prefix included): ``/livez`` counts its lag."""
    batch_size: int
    batches_in_flight: int
    """``EC_BATCHES_IN_FLIGHT``: how many batches may await their acks while the next is taken."""
    commit_interval_seconds: float
    policy: RetryPolicy
    """How reading committed offsets and checking gaps hold through an outage."""
    commit_policy: RetryPolicy
    """How a commit holds: for as long as the outage lasts."""

    @classmethod
    def from_settings(cls, settings: Settings, station: Station) -> LoopConfig:
        """The loop config of ``station``'s agent under ``settings``."""
        return cls(
            input_topic=settings.topic(TOPOLOGY[station].input),
            batch_size=settings.batch_size,
            batches_in_flight=settings.batches_in_flight,
            commit_interval_seconds=settings.broker_commit_interval_seconds,
            policy=RetryPolicy.from_settings(settings),
            # A commit waits out an outage for as long as it lasts: waiting loses nothing (the records
            # are only read again), and while there is work the batches' own holds bound the outage.
            commit_policy=RetryPolicy.from_settings(settings, forever=True),
        )


@dataclass
class _Taken:
    """A batch the agent took and started: its records, its station's outcomes, its acks to await."""

    records: list[Record]
    started: Started
    since: float
    trips: int


class AgentLoop:
    """One agent: batches from its channel, gap checks, the station, explicit commits, crash-only."""

    def __init__(
        self,
        app: faust.App,
        station: Station,
        config: LoopConfig,
        runner: BatchRunner,
        probe: OffsetProbe,
        *,
        on_crash: Callable[[BaseException, str], Any] = crash,
        commit: CommitFn | None = None,
        metrics: WorkerMetrics | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app = app
        self.station = station
        self.config = config
        self.runner = runner
        self.probe = probe
        self.tracker = OffsetTracker()
        self.policy = config.policy
        self.metrics = metrics or WorkerMetrics()
        self.metrics.start_agent(station)
        self.committer = Committer(
            app,
            self.tracker,
            config.commit_interval_seconds,
            config.commit_policy,
            commit,
            name=str(station),
            on_commit=functools.partial(self.metrics.committed, station),
        )
        self.on_crash = on_crash
        self.clock = clock
        self.processed = 0
        self.last_progress = clock()
        """When the agent last took a batch or finished one."""
        self.waiting_since: float | None = None
        """Since when the agent waits on an empty channel (None while it has a batch)."""
        self.hold_started: float | None = None
        """Since when the current batch has been held for an outage (None when it is not)."""
        self.hold_reason: str | None = None
        """What failed, while a batch is held (``/readyz`` says it)."""
        self._in_flight: deque[asyncio.Future[None]] = deque()
        """The batches taken and not yet finished, oldest first (while :meth:`consume` runs)."""
        self._prefetched: tuple[int, frozenset[tuple[str, int]], asyncio.Future[Committed]] | None = None
        """The group's committed offsets of the agent's input partitions, read when they were assigned
        (:meth:`prefetch_committed`): the generation, the partitions, the answer."""
        if runner.on_hold is None:
            runner.on_hold = self.on_hold
        if runner.on_progress is None:
            runner.on_progress = self.progressed

    def prefetch_committed(self, assigned: Iterable[Any]) -> None:
        """The group was assigned ``assigned`` (topic partitions): read its committed offsets of this
        agent's input now, so the agent's first batch need not wait for them (a new admin client and
        its round trips, behind the other agents' batches on the one loop: 150-360 ms of a backlog's
        fill, BENCHMARKS.md).

        Nearly always what the group has committed at the agent's first batch: within one generation
        only this member commits these partitions, and this agent commits a partition only once it
        knows where the partition starts. But a commit of the last generation retried into this one
        can land after this read and before Faust's own, so a first batch that finds a gap reads again
        (:meth:`_verify`). A batch of another generation reads them again too (:meth:`_committed`).
        """
        topic = self.config.input_topic
        mine = frozenset((tp.topic, tp.partition) for tp in assigned if tp.topic == topic)
        if not mine:
            self._prefetched = None
            return
        reading = asyncio.ensure_future(self.probe.committed(sorted(mine)))
        reading.add_done_callback(retrieved)  # a failure is read again, held, by _committed
        self._prefetched = (self.app.consumer_generation_id, mine, reading)

    async def _committed(
        self, unknown: list[tuple[str, int]], *, early_ok: bool = True
    ) -> tuple[Committed, bool]:
        """The group's committed offsets of ``unknown``, and whether they are the ones read at the
        assignment (used when they are of the tracker's generation, were read without error and
        ``early_ok``), else read now (held through an outage)."""
        early = self._prefetched
        if (
            early_ok
            and early is not None
            and early[0] == self.tracker.generation
            and early[1].issuperset(unknown)
        ):
            try:
                found = await asyncio.shield(early[2])
            except Exception as exc:  # noqa: BLE001 - read again below, the way every read is held
                log.info(
                    "%s: committed offsets read at the assignment failed (%s); reading again",
                    self.station,
                    exc,
                )
            else:
                return {tp: found.get(tp) for tp in unknown}, True
        return await self._read_committed(unknown), False

    async def _read_committed(self, unknown: list[tuple[str, int]]) -> Committed:
        return await hold(
            lambda: self.probe.committed(unknown),
            what=f"{self.station}: reading committed offsets",
            policy=self.policy,
            on_hold=self.on_hold,
        )

    def on_hold(self, held: float | None, why: str | None = None) -> None:
        """The retry policy's listener: how long the current batch has been held and why, None when
        released."""
        self.hold_started = None if held is None else self.clock() - held
        self.hold_reason = None if held is None else why
        self.metrics.set_held(self.station, self.held_seconds())

    def held_seconds(self) -> float:
        return 0.0 if self.hold_started is None else self.clock() - self.hold_started

    def progressed(self) -> None:
        """The runner moved a batch on (a judge answered one of its cases): not a stall."""
        self.last_progress = self.clock()

    def on_wait(self, waiting: bool) -> None:
        now = self.clock()
        if not waiting and self.waiting_since is not None:
            self.metrics.spent(self.station, "records", now - self.waiting_since)
        self.waiting_since = now if waiting else None
        if not waiting:
            self.last_progress = now

    async def lags(self) -> dict[tuple[str, int], int]:
        """Unprocessed records per assigned partition of the agent's input topic."""
        consumer: Any = self.app.consumer
        topic = self.config.input_topic
        out: dict[tuple[str, int], int] = {}
        for tp in consumer.assignment():
            if tp.topic != topic:
                continue
            high = consumer.highwater(tp)
            done = self.tracker.position((tp.topic, tp.partition))
            if done is None:  # nothing taken yet: ask the consumer, which may have to ask the broker
                try:
                    done = await asyncio.wait_for(consumer.position(tp), POSITION_PROBE_SECONDS)
                except TimeoutError:  # its broker is down: /livez answers without that partition
                    continue
            if high is not None and high >= 0 and done is not None:
                out[(tp.topic, tp.partition)] = max(0, high - done)
        return out

    def stalled(self, lags: dict[tuple[str, int], int], stall_seconds: float) -> str | None:
        """Why the agent counts as stuck, or None: no progress for ``stall_seconds`` while it has work.

        A batch held for a known outage is not a stall (``/readyz`` reports the outage, and
        ``EC_MAX_HOLD_SECONDS`` bounds it); an agent waiting on an empty channel is stuck only if
        its input has lag, i.e. records are not being delivered to it.
        """
        if self.hold_started is not None:
            return None
        now = self.clock()
        if self.waiting_since is None:
            if now - self.last_progress > stall_seconds:
                held = now - self.last_progress
                return f"{self.station}: one batch for {held:.0f}s (EC_STALL_SECONDS={stall_seconds:g})"
            return None
        lag = sum(lags.values())
        if lag and now - self.waiting_since > stall_seconds:
            return (
                f"{self.station}: waiting {now - self.waiting_since:.0f}s for records while its input has "
                f"{lag} unprocessed (EC_STALL_SECONDS={stall_seconds:g})"
            )
        return None

    async def consume(self, stream: Any) -> None:
        """The agent body: runs until the worker stops; never raises into Faust's supervisor."""
        committing = asyncio.ensure_future(self.committer.run())
        committing.add_done_callback(self._committer_ended)
        in_flight = self._in_flight = deque[asyncio.Future[None]]()
        window = self.config.batches_in_flight
        source = batches(stream, self.config.batch_size, self.on_wait, self.settle if window > 1 else None)
        try:
            async for events in self._until_failed(source):
                if in_flight and self.app.consumer_generation_id != self.tracker.generation:
                    await self._drain(in_flight)  # the old generation's batches end before the new one starts
                taken = await self.begin(events)
                if taken is None:
                    continue
                previous = in_flight[-1] if in_flight else None
                finishing = asyncio.ensure_future(self._finish(previous, taken))
                finishing.add_done_callback(self._finish_failed)
                in_flight.append(finishing)
                blocked = self.clock()
                while in_flight and (len(in_flight) >= window or in_flight[0].done()):
                    await in_flight.popleft()
                self.metrics.spent(self.station, "acks", self.clock() - blocked)
            await self._drain(in_flight)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # noqa: BLE001 - crash-only: nothing of this batch is committed
            if exc is not self._failed:  # a batch in flight that failed was reported when it did
                self.on_crash(exc, f"{self.station} agent")
            raise
        finally:
            committing.cancel()
            await self._settle(in_flight)
            await self.commit_on_the_way_out()

    _failed: BaseException | None = None
    _failure: asyncio.Event | None = None

    async def settle(self) -> None:
        """Less than a full batch is waiting: while the oldest batch in flight awaits its acks (for
        at most ``SETTLE_SECONDS``), let more records arrive, so the next batch is not one or two.

        Taking whatever is there at once made batches of 1-5 records under a full backlog (Faust's
        consumer hands records over a few at a time), and each batch pays its own Redis round trip,
        produce request and commit bookkeeping: pipelined, the worker spent a third more CPU per
        record than one batch at a time. An agent with nothing in flight (an idle pipeline, the
        first record after a pause) never waits here.
        """
        if self._in_flight and not (head := self._in_flight[0]).done():
            started = self.clock()
            await asyncio.wait((head,), timeout=SETTLE_SECONDS)
            self.metrics.spent(self.station, "settle", self.clock() - started)

    def _finish_failed(self, task: asyncio.Future[None]) -> None:
        """A batch in flight that failed is a crash-only exit, at once (not when the loop next looks)."""
        if not task.cancelled() and (exc := task.exception()) is not None and self._failed is None:
            self._failed = exc
            if self._failure is not None:
                self._failure.set()
            self.on_crash(exc, f"{self.station} agent")

    async def _until_failed(self, source: AsyncIterator[list[Any]]) -> AsyncIterator[list[Any]]:
        """The batches, until one in flight fails: then its error, even while waiting for records."""
        failure = self._failure = asyncio.Event()
        failed = asyncio.ensure_future(failure.wait())
        nxt: asyncio.Future[list[Any]] | None = None
        try:
            while True:
                nxt = asyncio.ensure_future(anext(source))
                await asyncio.wait((nxt, failed), return_when=asyncio.FIRST_COMPLETED)
                if self._failed is not None:
                    raise self._failed
                try:
                    events = nxt.result()
                except StopAsyncIteration:
                    return
                yield events
        finally:
            failed.cancel()
            if nxt is not None:
                nxt.cancel()

    @staticmethod
    async def _drain(in_flight: deque[asyncio.Future[None]]) -> None:
        while in_flight:
            await in_flight.popleft()

    async def _settle(self, in_flight: deque[asyncio.Future[None]]) -> None:
        """On the way out: let the batches in flight finish for a moment, then drop the rest (they are
        not committed, so they are read again)."""
        pending = [task for task in in_flight if not task.done()]
        if pending:
            await asyncio.wait(pending, timeout=SETTLE_ON_STOP_SECONDS)
            for task in pending:
                task.cancel()
        for task in in_flight:  # retrieved: a failure was already reported by _finish_failed
            if task.done() and not task.cancelled():
                task.exception()

    def _committer_ended(self, task: asyncio.Future[None]) -> None:
        """The committer ends only when cancelled; an error it raised is a crash-only exit."""
        if not task.cancelled() and (exc := task.exception()) is not None:
            self.on_crash(exc, f"{self.station} committer")

    async def commit_on_the_way_out(self) -> None:
        """Commit what is finished (best effort: not committing only means repeats, never a loss).

        The batches in flight get a moment to finish first: a batch whose outputs the broker has
        acknowledged (so a reader already sees them) but whose acks the worker has not yet taken in
        would otherwise be left out of the last commit and judged again by the next worker.
        """
        pending = [task for task in self._in_flight if not task.done()]
        if pending:
            await asyncio.wait(pending, timeout=SETTLE_ON_STOP_SECONDS)
        try:
            await asyncio.wait_for(self.committer.commit_now(), 5.0)
        except Exception as exc:  # noqa: BLE001 - the records are read again after a restart
            log.warning("%s: final commit failed (%s); finished records are read again", self.station, exc)

    async def process(self, events: Sequence[Any]) -> None:
        """One batch of events, alone: taken, processed, delivered, then marked for commit."""
        taken = await self.begin(events)
        if taken is not None:
            await self._finish(None, taken)

    async def begin(self, events: Sequence[Any]) -> _Taken | None:
        """Stale events skipped, gaps verified, the station run and its Redis effects durable, its
        messages handed to the producer. None when no event is of the current generation."""
        generation = self.app.consumer_generation_id
        current = [e for e in events if e.message.generation_id == generation]
        if not current:
            return None
        since = self.clock()
        trips, redis = self.runner.round_trips(), self.runner.redis_seconds
        records = [to_record(e) for e in current]
        self.tracker.start_generation(generation)
        with self.runner.tracer.batch(records[0].topic, len(records)):
            await self._verify(records)
            started = await self.runner.start(records)
        self.tracker.take([((r.topic, r.partition), r.offset) for r in records])  # type: ignore[misc]
        on_redis = self.runner.redis_seconds - redis
        self.metrics.spent(self.station, "redis", on_redis)
        self.metrics.spent(self.station, "station", self.clock() - since - on_redis)
        return _Taken(records, started, since, trips)

    async def _finish(self, previous: asyncio.Future[None] | None, taken: _Taken) -> None:
        """After the batch before it: this batch's acks, then its records are marked for commit."""
        if previous is not None:
            try:
                await asyncio.shield(previous)
            except BaseException:  # its failure (or cancellation) is this batch's too: not finished
                taken.started.abandon()
                raise
        await taken.started.delivered()
        records, outcomes = taken.records, taken.started.outcomes
        self.tracker.finish([((r.topic, r.partition), r.offset) for r in records])  # type: ignore[misc]
        self.processed += len(records)
        self.last_progress = self.clock()
        self.metrics.batch(
            self.station, outcomes, self.last_progress - taken.since, self.runner.round_trips() - taken.trips
        )
        for record, outcome in zip(records, outcomes, strict=True):
            if outcome.rejection is not None:
                self._log_rejection(record, outcome)
        self.committer.poke()

    def _log_rejection(self, record: Record, outcome: Outcome[Any]) -> None:
        refused = outcome.rejection
        reason, error = (None, None) if refused is None else (refused["reason"], refused["error"])
        fields = record_fields(
            record,
            agent=str(self.station),
            run_id=outcome.run_id,
            tool_call_id=outcome.tool_call_id,
            event_id=outcome.event_id,
            reason=reason,
        )
        log.warning("%s: dead letter %s: %s", self.station, reason, error, extra=fields)

    async def _verify(self, records: Sequence[Record]) -> None:
        """Know where each partition starts, and make sure no record was skipped on the way to us.

        Raises:
            RecordsSkipped: records the broker holds were never delivered (the worker must exit).
        """
        positions = [((r.topic, r.partition), r.offset) for r in records]
        unknown = self.tracker.unknown(tp for tp, _ in positions)  # type: ignore[misc]
        if unknown:
            committed, early = await self._committed(unknown)
            for tp in unknown:
                self.tracker.start_at(tp, committed.get(tp))
            gapped = sorted({gap.tp for gap in self.tracker.gaps(positions)} & set(unknown))  # type: ignore[arg-type]
            if early and gapped:
                # Read at the assignment, before Faust's own read: a commit of the last generation
                # retried into this one (aiokafka builds each try with the generation of its moment;
                # the broker does not ask who owns the partition) may have landed in between, and
                # Faust then starts past what was read. Ask again before calling it a gap.
                again, _ = await self._committed(gapped, early_ok=False)
                for tp in gapped:
                    self.tracker.restart_at(tp, again.get(tp))
        for gap in self.tracker.gaps(positions):  # type: ignore[arg-type]
            first: int | None = await hold(
                functools.partial(self.probe.first_offset_from, gap.tp[0], gap.tp[1], gap.start),
                what=f"{self.station}: checking {gap}",
                policy=self.policy,
                on_hold=self.on_hold,
            )
            if first != gap.found:
                raise RecordsSkipped(
                    f"{gap} were never delivered to the {self.station} agent (the broker's first record "
                    "there is "
                    f"{first}); exiting so they are read again"
                )
            log.info("%s: %s hold no records (first record is %d); accepted", self.station, gap, first)
