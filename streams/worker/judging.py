"""The semantic agent's batches (SPEC 4.4): recorded judgements looked up, the judge asked for the rest with
the calls overlapping, each new judgement recorded write-once, then the outputs produced.

The same two steps as :class:`~streams.worker.runner.BatchRunner`, so the agent loop treats it as any
other runner, but split where the time goes:

- :meth:`SemanticRunner.start` reads each hand-over, looks up the batch's recorded judgements in one
  Redis round trip (a replay finds them all and calls no model) and *starts* a judge call for each draft
  with none — then returns, so the agent takes its next batch while these calls are out. Calls of
  several batches overlap, within ``EC_SEMANTIC__MAX_IN_FLIGHT`` open at once and
  ``EC_SEMANTIC__CALLS_PER_SECOND``; a draft already being asked about (the same run and digest) shares
  that call, and such a case is not looked up (a batch before may record it and drop the call while the
  lookup is out, which would ask the model twice). A recorded value is read again from its raw answer
  against the draft's own case (:func:`~streams.stations.semantic.held_record`); one that is not a
  judgement of the case is logged, counted and asked about again as if nothing were recorded.
- :meth:`JudgedBatch.delivered` (awaited by the loop only after the batch before it finished) waits for
  the batch's calls, records the new judgements write-once in one Redis round trip made durable
  (``SET NX GET``: a judgement recorded first by another worker wins, so both emit the same bytes),
  then produces the judgement events and, in enforce mode, the verdicts, violations and reports, and
  waits for the broker's acks.

So calls finish out of order, but batches finish in order and the committer commits only past drafts
whose judgement is recorded and whose outputs the broker acknowledged. A judge that is down, slow,
rate-limited or answering nonsense holds its draft (``streams.retry.hold``: backoff, ``Retry-After``
honoured, at most ``EC_MAX_HOLD_SECONDS`` before the worker exits for a supervisor to restart it): a
draft is never published unjudged and never dead-lettered for the judge's fault. A judge that answers it
cannot judge a case (400, 413, 422: :class:`~streams.errors.JudgeDeclined`) neither holds nor stops the
worker: the draft is not asked (``NOT_ASKED``, as over the characters cap) and that is recorded like an
answer. The judgement is
recorded before anything is produced, so a worker killed after producing reads the record when the
draft comes again and repeats the same bytes.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from models.semantic import JudgementRecord
from models.vocab import Station
from streams import codec
from streams.errors import JudgeDeclined, JudgeRefused, JudgeUnavailable
from streams.judge.pacing import Pacing
from streams.judge.port import JudgePort
from streams.ledger.store import LedgerStore
from streams.messages import Output, Record
from streams.observe.metrics import WorkerMetrics
from streams.observe.tracing import Tracer
from streams.pipeline import Outcome, PendingJudge, emissions, finish_judge, run_station
from streams.retry import hold
from streams.stations.semantic import (
    AnswerInvalid,
    RecordInvalid,
    SemanticPlan,
    declined,
    held_record,
    judge_messages,
    read,
)
from streams.worker.runner import BatchRunner, RunnerConfig, Sink, Started, wall_clock

log = logging.getLogger(__name__)

Key = tuple[str, str]
"""``(run_id, digest)``: where one case's judgement is recorded."""

NOT_HELD_KEPT = 1024
"""Stored values that were no judgement of their case, remembered so each is logged once."""


class _Holds:
    """Many calls may be held at once; the agent is told it holds while any is, released when none is."""

    def __init__(self, runner: BatchRunner) -> None:
        self.runner = runner
        self.held: dict[int, float] = {}

    def listener(self, call: int) -> Any:
        def on_hold(held: float | None, why: str | None) -> None:
            if held is None:
                self.held.pop(call, None)
            else:
                self.held[call] = held
            if self.runner.on_hold is not None:
                longest = max(self.held.values(), default=None)
                self.runner.on_hold(longest, why if longest is not None else None)

        return on_hold


class SemanticRunner(BatchRunner):
    """The semantic station over batches, its judge calls overlapping across batches."""

    def __init__(
        self,
        config: RunnerConfig,
        sink: Sink,
        store: LedgerStore,
        *,
        judge: JudgePort,
        metrics: WorkerMetrics | None = None,
        clock: Callable[[], str] = wall_clock,
        tracer: Tracer | None = None,
    ) -> None:
        super().__init__(Station.SEMANTIC, config, sink, store, clock=clock, tracer=tracer)
        semantic = self.rules.semantic
        self.judge = judge
        self.pacing = Pacing(semantic.max_in_flight, semantic.calls_per_second)
        self.metrics = metrics or WorkerMetrics()
        self.calls: dict[Key, asyncio.Future[JudgementRecord]] = {}
        """The calls out now, by where their judgement will be recorded: one per case, however many
        drafts of the batches in flight share it."""
        self._holds = _Holds(self)
        self._call_number = 0
        self._not_held: dict[Key, bytes] = {}
        """The last value found under each key that was no judgement of its case: logged and counted
        once, however often it is read again (the key is write-once; at most :data:`NOT_HELD_KEPT`)."""

    async def start(self, records: Sequence[Record]) -> Started:
        """The hand-overs read, their recorded judgements looked up, a call started for each draft
        with none; returns without waiting for the calls (:meth:`JudgedBatch.delivered` does)."""
        steps = [run_station(Station.SEMANTIC, record, self.rules) for record in records]
        asked = [s for s in steps if isinstance(s, PendingJudge) and s.plan.asked]
        plans = {step.key: step.plan for step in asked}  # one case per key: the digest names it
        # a case being asked about shares that call and is not looked up: the batch before may record it
        # and drop it from self.calls while this lookup is out, and the model would be asked twice
        calls = {key: self.calls[key] for key in plans if key in self.calls}
        keys = [key for key in plans if key not in calls]
        found: dict[Key, JudgementRecord] = {}
        if keys:
            store = self._store()
            replies = await self.in_redis(
                lambda: store.recorded_judgements(keys),
                f"semantic: looking up {len(keys)} recorded judgements",
            )
            for key, reply in zip(keys, replies, strict=True):
                if reply is None:
                    continue
                held = self._held(key, plans[key], reply, then="asking the judge again")
                if held is not None:
                    found[key] = held
        for key, planned in plans.items():
            if key in found or key in calls:
                continue
            call = self.calls.get(key)
            if call is None:
                call = self.calls[key] = asyncio.ensure_future(self._ask(planned))
            calls[key] = call
        return JudgedBatch(self, list(records), steps, found, calls)

    def _held(self, key: Key, planned: SemanticPlan, value: bytes, *, then: str) -> JudgementRecord | None:
        """The judgement stored under ``key``, read again from its answer against ``planned``'s case; None
        (logged at warning, counted) when it is not one — whatever it holds, it is this record's fault
        alone, never the batch's."""
        try:
            return held_record(planned, value)
        except Exception as exc:  # noqa: BLE001 - per-record isolation: a stored value never stops the worker
            why = str(exc) if isinstance(exc, RecordInvalid) else f"{type(exc).__name__}: {exc}"
        if self._not_held.get(key) == value:
            return None  # told once already
        if len(self._not_held) >= NOT_HELD_KEPT:
            self._not_held.clear()
        self._not_held[key] = value
        run_id, digest = key
        log.warning(
            "semantic: the judgement recorded for run %s digest %s is not a judgement of its case (%s); %s",
            run_id,
            digest,
            why,
            then,
        )
        self.metrics.judgement_record_invalid()
        return None

    async def _ask(self, planned: SemanticPlan) -> JudgementRecord:
        """The judge's answer about one case, read; asked again while it gives none (held, backoff,
        ``Retry-After`` honoured).

        A judge that declines the case (400, 413, 422) gives :func:`declined`'s record: not asked.

        Raises:
            HoldExpired: no usable answer for longer than ``EC_MAX_HOLD_SECONDS`` (the worker exits).
            JudgeRefused: the judge refused for good (the worker exits).
        """
        self._call_number += 1
        listener = self._holds.listener(self._call_number)
        messages = judge_messages(planned)

        async def once() -> JudgementRecord:
            async with self.pacing.call():
                self.metrics.judge_in_flight.set(self.pacing.in_flight)
                began = time.monotonic()
                try:
                    answer = await self.judge.ask(messages, model=planned.model)
                    judged = read(planned, answer)
                except AnswerInvalid as exc:
                    self.metrics.judge_call("unavailable", time.monotonic() - began)
                    raise JudgeUnavailable(
                        f"the judge's answer is not a judgement of the case: {exc}"
                    ) from exc
                except JudgeUnavailable:
                    self.metrics.judge_call("unavailable", time.monotonic() - began)
                    raise
                except JudgeDeclined as exc:
                    self.metrics.judge_call("declined", time.monotonic() - began)
                    handed = planned.event
                    log.warning(
                        "semantic: run %s draft %r attempt %d is not asked: %s",
                        handed["run_id"],
                        handed["draft_id"],
                        handed["attempt"],
                        exc,
                    )
                    self._progressed()
                    return declined(planned)
                except JudgeRefused:
                    self.metrics.judge_call("refused", time.monotonic() - began)
                    raise
                finally:
                    self.metrics.judge_in_flight.set(self.pacing.in_flight - 1)
                self.metrics.judge_call("answered", time.monotonic() - began)
                self._progressed()
                return judged

        event = planned.event
        return await hold(
            once,
            what=f"semantic: judging run {event['run_id']} draft {event['draft_id']!r} "
            f"attempt {event['attempt']}",
            policy=self.policy,
            on_hold=listener,
        )

    def _progressed(self) -> None:
        """A call answered: the batch moves on (a batch of slow answers is no stall to ``/livez``)."""
        if self.on_progress is not None:
            self.on_progress()


class JudgedBatch(Started):
    """A batch whose judge calls are out: :meth:`delivered` waits for them, records, produces, and waits
    for the acks; :attr:`outcomes` is filled once it returned."""

    def __init__(
        self,
        runner: SemanticRunner,
        records: list[Record],
        steps: list[Any],
        found: dict[Key, JudgementRecord],
        calls: dict[Key, asyncio.Future[JudgementRecord]],
    ) -> None:
        super().__init__(runner, [], [], None, [])
        self.semantic = runner
        self.records = records
        self.steps = steps
        self.found = found
        self.calls = calls

    def abandon(self) -> None:
        """A batch before it failed (the worker is on its way out, crash-only): its calls are cancelled."""
        for key, call in self.calls.items():
            call.cancel()
            if self.semantic.calls.get(key) is call:
                del self.semantic.calls[key]
        super().abandon()

    async def delivered(self) -> None:
        """The batch's judgements known and recorded, its messages produced and acknowledged.

        Raises:
            HoldExpired, JudgeRefused, KafkaRefused, RedisRefused: as the holds let them through (the
                worker exits without committing the batch).
        """
        runner = self.semantic
        called: dict[Key, JudgementRecord] = {}
        for key, call in self.calls.items():
            called[key] = await asyncio.shield(call)
        recorded = dict(self.found)
        if called:
            store = runner._store()
            items = [(run_id, digest, codec.dumps(judged)) for (run_id, digest), judged in called.items()]
            stored = await runner.in_redis(
                lambda: store.record_judgements(items), f"semantic: recording {len(items)} judgements"
            )
            # the record as stored: another worker's judgement of the same case, recorded first, wins;
            # a stored value that is not one (written by no station) leaves this call's own answer
            plans = {step.key: step.plan for step in self.steps if isinstance(step, PendingJudge)}
            for (key, answered), (_, _, mine), value in zip(called.items(), items, stored, strict=True):
                if value == mine:
                    recorded[key] = answered
                    continue
                held = runner._held(key, plans[key], value, then="this call's answer decides the draft")
                recorded[key] = answered if held is None else held
            for key, call in self.calls.items():  # recorded now: a later draft of the case looks it up
                if runner.calls.get(key) is call:
                    del runner.calls[key]
        outcomes: list[Outcome[Any]] = []
        for record, step in zip(self.records, self.steps, strict=True):
            if not isinstance(step, PendingJudge):
                outcomes.append(step)
                continue
            judged = recorded.get(step.key) if step.plan.asked else None
            was_called = step.key in called
            runner.metrics.judged("not_asked" if judged is None else "called" if was_called else "recorded")
            outcomes.append(finish_judge(step, judged, was_called, record))
        processed_at = runner.clock()
        messages: list[Output] = []
        for record, outcome in zip(self.records, outcomes, strict=True):
            messages += emissions(outcome, record, runner.rules, processed_at)
        self.outcomes, self.messages = outcomes, messages
        await super().delivered()
