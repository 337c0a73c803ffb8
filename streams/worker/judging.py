"""The semantic agent's batches (SPEC 4.4): recorded judgements looked up, the judge asked for the rest with
the calls overlapping, each new judgement recorded write-once, then the outputs produced.

The same two steps as :class:`~streams.worker.runner.BatchRunner`, so the agent loop treats it as any
other runner, but split where the time goes:

- :meth:`SemanticRunner.start` reads each hand-over, looks up the batch's recorded judgements in one
  Redis round trip (a replay finds them all and calls no model) and *starts* a judge call for each draft
  with none — then returns, so the agent takes its next batch while these calls are out. Calls of
  several batches overlap, within ``EC_SEMANTIC__MAX_IN_FLIGHT`` open at once and
  ``EC_SEMANTIC__CALLS_PER_SECOND``; a draft already being asked about (the same run and digest) shares
  that call.
- :meth:`JudgedBatch.delivered` (awaited by the loop only after the batch before it finished) waits for
  the batch's calls, records the new judgements write-once in one Redis round trip made durable
  (``SET NX GET``: a judgement recorded first by another worker wins, so both emit the same bytes),
  then produces the judgement events and, in enforce mode, the verdicts, violations and reports, and
  waits for the broker's acks.

So calls finish out of order, but batches finish in order and the committer commits only past drafts
whose judgement is recorded and whose outputs the broker acknowledged. A judge that is down, slow,
rate-limited or answering nonsense holds its draft (``streams.retry.hold``: backoff, ``Retry-After``
honoured, at most ``EC_MAX_HOLD_SECONDS`` before the worker exits for a supervisor to restart it): a
draft is never published unjudged and never dead-lettered for the judge's fault. The judgement is
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
from streams.errors import JudgeRefused, JudgeUnavailable
from streams.judge.pacing import Pacing
from streams.judge.port import JudgePort
from streams.ledger.store import LedgerStore
from streams.messages import Output, Record
from streams.observe.metrics import WorkerMetrics
from streams.observe.tracing import Tracer
from streams.pipeline import Outcome, PendingJudge, emissions, finish_judge, run_station
from streams.retry import hold
from streams.stations.semantic import AnswerInvalid, SemanticPlan, judge_messages, read
from streams.worker.runner import BatchRunner, RunnerConfig, Sink, Started, wall_clock

log = logging.getLogger(__name__)

Key = tuple[str, str]
"""``(run_id, digest)``: where one case's judgement is recorded."""


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

    async def start(self, records: Sequence[Record]) -> Started:
        """The hand-overs read, their recorded judgements looked up, a call started for each draft
        with none; returns without waiting for the calls (:meth:`JudgedBatch.delivered` does)."""
        steps = [run_station(Station.SEMANTIC, record, self.rules) for record in records]
        asked = [(i, s) for i, s in enumerate(steps) if isinstance(s, PendingJudge) and s.plan.asked]
        keys = list(dict.fromkeys(step.key for _, step in asked))
        found: dict[Key, JudgementRecord] = {}
        if keys:
            store = self._store()
            replies = await self.in_redis(
                lambda: store.recorded_judgements(keys),
                f"semantic: looking up {len(keys)} recorded judgements",
            )
            found = {
                key: codec.loads(reply) for key, reply in zip(keys, replies, strict=True) if reply is not None
            }
        calls: dict[Key, asyncio.Future[JudgementRecord]] = {}
        for _, step in asked:
            if step.key in found or step.key in calls:
                continue
            call = self.calls.get(step.key)
            if call is None:
                call = self.calls[step.key] = asyncio.ensure_future(self._ask(step.plan))
            calls[step.key] = call
        return JudgedBatch(self, list(records), steps, found, calls)

    async def _ask(self, planned: SemanticPlan) -> JudgementRecord:
        """The judge's answer about one case, read; asked again while it gives none (held, backoff,
        ``Retry-After`` honoured).

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
                except JudgeRefused:
                    self.metrics.judge_call("refused", time.monotonic() - began)
                    raise
                finally:
                    self.metrics.judge_in_flight.set(self.pacing.in_flight - 1)
                self.metrics.judge_call("answered", time.monotonic() - began)
                return judged

        event = planned.event
        return await hold(
            once,
            what=f"semantic: judging run {event['run_id']} draft {event['draft_id']!r} "
            f"attempt {event['attempt']}",
            policy=self.policy,
            on_hold=listener,
        )


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
            # the record as stored: another worker's judgement of the same case, recorded first, wins
            recorded.update({key: codec.loads(value) for key, value in zip(called, stored, strict=True)})
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
