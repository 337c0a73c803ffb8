"""The semantic agent's batches (SPEC 4.4) with fakes: a scripted judge whose calls the test finishes in
any order, the memory ledger (Redis's write-once records) and a sink that records what was produced."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import pytest

from models.limits import SemanticSettings
from models.vocab import Station, Topic
from streams import codec
from streams.errors import JudgeDeclined, JudgeUnavailable
from streams.ledger.memory import MemoryLedgerStore
from streams.messages import Record
from streams.pipeline import PendingJudge, StationRules, run_station
from streams.settings import Settings
from streams.worker.judging import SemanticRunner
from streams.worker.runner import RunnerConfig
from tests.stations.test_semantic import guard_outcome, judged, overclaim
from tests.streams.conftest import FakeSink


class ScriptedJudge:
    """Answers each call when the test says so (``release``), or at once; ``fail`` calls fail first."""

    def __init__(self, *, hold: bool = False, fail: int = 0, garbage: int = 0, decline: str = "") -> None:
        self.hold = hold
        self.fail = fail
        self.garbage = garbage
        self.decline = decline
        """A conclusion holding this is declined (400: over the model's context), every time."""
        self.calls: list[str] = []
        self.open = 0
        self.most_open = 0
        self.gates: dict[str, asyncio.Event] = {}

    def release(self, marker: str) -> None:
        self.gates.setdefault(marker, asyncio.Event()).set()

    async def ask(self, messages: Sequence[dict[str, str]], *, model: str) -> str:
        case = json.loads(messages[-1]["content"].split("\n", 1)[1])
        conclusion = case["claims"][-1]["text"]
        self.calls.append(conclusion)
        self.open += 1
        self.most_open = max(self.most_open, self.open)
        try:
            if self.fail:
                self.fail -= 1
                raise JudgeUnavailable("scripted outage")
            if self.garbage:
                self.garbage -= 1
                return "I think it is fine."
            if self.decline and self.decline in conclusion:
                raise JudgeDeclined("the judge cannot judge this case (400: context length)", status=400)
            if self.hold:
                await self.gates.setdefault(conclusion, asyncio.Event()).wait()
            label = "unsupported" if "root cause" in conclusion else "supported"
            return json.dumps(
                {
                    "claims": [
                        {
                            "path": c["path"],
                            "label": label if c["kind"] == "CONCLUSION" else "supported",
                            "evidence": [],
                            "reason": "scripted",
                        }
                        for c in case["claims"]
                    ]
                }
            )
        finally:
            self.open -= 1

    async def close(self) -> None:
        pass


class Store(MemoryLedgerStore):
    """The memory ledger, remembering the order of its calls."""

    def __init__(self, log: list[str]) -> None:
        super().__init__()
        self.log = log

    async def record_judgements(self, records: Sequence[tuple[str, str, bytes]]) -> list[bytes]:
        self.log.append("record")
        return await super().record_judgements(records)


class Sink(FakeSink):
    def __init__(self, log: list[str]) -> None:
        super().__init__()
        self.log = log

    async def send_all(self, messages: Sequence[Any]) -> None:
        self.log.append("send")
        await super().send_all(messages)


SETTINGS = Settings(
    topic_prefix="t.",
    retry_initial_backoff_ms=1,
    retry_max_backoff_ms=5,
    semantic=SemanticSettings(mode="enforce", judge_model="m", max_in_flight=8, calls_per_second=1000),
)
RULES = StationRules.from_settings(SETTINGS)


def handed(*conclusions: str, start: int = 0) -> list[Record]:
    """Hand-overs of d-pass with each conclusion, as the guard writes them."""
    out = []
    for i, text in enumerate(conclusions):
        outcome = guard_outcome(RULES, overclaim(text), offset=start + i)
        (value,) = [o.value for o in outcome.outputs if o.topic == Topic.SEMANTIC_REVIEW]
        out.append(Record("t.semantic-review", 0, start + i, 1_700_000_000_000 + start + i, b"run-g", value))
    return out


def runner(judge: ScriptedJudge, store: MemoryLedgerStore, sink: FakeSink) -> SemanticRunner:
    return SemanticRunner(RunnerConfig.from_settings(SETTINGS, RULES), sink, store, judge=judge)


async def test_calls_overlap_across_batches_and_finish_out_of_order_while_batches_finish_in_order() -> None:
    log: list[str] = []
    judge, store, sink = ScriptedJudge(hold=True), Store(log), Sink(log)
    semantic = runner(judge, store, sink)
    first = await semantic.start(handed("A: upstream 超时"))
    second = await semantic.start(handed("B: upstream 超时", start=1))
    await asyncio.sleep(0.01)
    assert judge.most_open == 2  # both batches' calls out at once
    judge.release("B: upstream 超时")  # the later call answers first
    await asyncio.sleep(0.01)
    assert sink.messages == []  # nothing of the second batch goes before the first
    judge.release("A: upstream 超时")
    await first.delivered()
    await second.delivered()
    verdicts = sink.values("t.verdicts")
    assert [v["draft_sha256"] for v in verdicts] == [
        codec.loads(r.value)["verdict"]["draft_sha256"]
        for r in [*handed("A: upstream 超时"), *handed("B: upstream 超时", start=1)]
    ]
    assert log == ["record", "send", "record", "send"]  # recorded (durable) before anything is produced


async def test_each_answer_is_progress_while_its_batch_waits_for_the_others() -> None:
    """A slow judge (20-30 s an answer, 100 drafts a batch) keeps a batch out for minutes: each answer
    tells the agent's loop the batch moves (``/livez`` counts no stall), before the batch finishes."""
    log: list[str] = []
    judge, store, sink = ScriptedJudge(hold=True), Store(log), Sink(log)
    semantic = runner(judge, store, sink)
    answers: list[int] = []
    semantic.on_progress = lambda: answers.append(len(sink.messages))
    batch = await semantic.start(handed("A: upstream 超时", "B: upstream 超时"))
    await asyncio.sleep(0.01)
    assert answers == []
    judge.release("A: upstream 超时")
    await asyncio.sleep(0.01)
    assert answers == [0]  # one answer, nothing produced yet: the batch still waits for B
    judge.release("B: upstream 超时")
    await batch.delivered()
    assert answers == [0, 0] and sink.messages


async def test_a_recorded_judgement_decides_and_no_call_is_made() -> None:
    log: list[str] = []
    store = Store(log)
    batch = handed("the root cause is upstream", "upstream 超时配置过短")
    first_sink = Sink(log)
    await runner(ScriptedJudge(), store, first_sink).run(batch)
    judge = ScriptedJudge(fail=10**6)  # would never answer
    again = Sink(log)
    outcomes = await runner(judge, store, again).run(batch)
    assert judge.calls == []
    produced = [m for m in again.messages if m.topic != "t.audit"]
    assert produced == [m for m in first_sink.messages if m.topic != "t.audit"]  # byte for byte
    assert [o.audit["called"] for o in outcomes] == [False, False]
    assert [v["verdict"] for v in again.values("t.verdicts")] == ["REJECT", "PASS"]


async def test_one_call_per_case_however_many_drafts_share_it() -> None:
    judge = ScriptedJudge()
    store, sink = MemoryLedgerStore(), FakeSink()
    batch = handed("same text", "same text", "other text")
    await runner(judge, store, sink).run(batch)
    assert sorted(judge.calls) == ["other text", "same text"]
    assert len(sink.values("t.judgements")) == 3


@pytest.mark.parametrize("script", [{"fail": 3}, {"garbage": 2}], ids=["down", "nonsense"])
async def test_a_failing_judge_holds_the_draft_until_it_answers(script: dict[str, int]) -> None:
    judge = ScriptedJudge(**script)
    store, sink = MemoryLedgerStore(), FakeSink()
    held: list[float | None] = []
    semantic = runner(judge, store, sink)
    semantic.on_hold = lambda seconds, why: held.append(seconds)
    outcomes = await semantic.run(handed("upstream 超时配置过短"))
    assert len(judge.calls) == sum(script.values()) + 1
    assert held[0] is not None and held[-1] is None  # held, then released
    assert [o.rejection for o in outcomes] == [None]  # never a dead letter
    assert [v["verdict"] for v in sink.values("t.verdicts")] == ["PASS"]


async def test_a_judge_that_never_answers_stops_the_worker_rather_than_passing() -> None:
    from streams.errors import HoldExpired
    from streams.retry import RetryPolicy

    judge = ScriptedJudge(fail=10**6)
    sink = FakeSink()
    config = RunnerConfig(rules=RULES, policy=RetryPolicy(0.001, 0.002, 0.05))
    semantic = SemanticRunner(config, sink, MemoryLedgerStore(), judge=judge)
    with pytest.raises(HoldExpired):
        await semantic.run(handed("upstream 超时配置过短"))
    assert sink.messages == []


def test_the_station_name_is_semantic() -> None:
    assert runner(ScriptedJudge(), MemoryLedgerStore(), FakeSink()).station == Station.SEMANTIC


# --- a case the judge declines (400, 413, 422): not asked, recorded, the worker goes on -----------------


async def test_a_declined_case_gets_its_final_verdict_is_recorded_and_replays_without_a_call() -> None:
    judge = ScriptedJudge(decline="TOO LONG")
    store, sink = MemoryLedgerStore(), FakeSink()
    semantic = runner(judge, store, sink)
    batch = handed("TOO LONG for the model", "upstream 超时配置过短")
    outcomes = await semantic.run(batch)
    assert [o.rejection for o in outcomes] == [None, None]  # never a dead letter, the worker goes on
    verdicts = sink.values("t.verdicts")
    assert [v["verdict"] for v in verdicts] == ["REJECT", "PASS"]
    assert [x["code"] for x in verdicts[0]["violations"]] == ["SEMANTIC_INPUT_TOO_LARGE"]
    assert [j["status"] for j in sink.values("t.judgements")] == ["NOT_ASKED", "JUDGED"]
    assert 'evidence_chain_judge_calls_total{outcome="declined"} 1.0' in semantic.metrics.render().decode()
    (kept,) = await store.recorded_judgements([(o.run_id, o.audit["digest"]) for o in outcomes[:1]])
    assert kept is not None and codec.loads(kept)["answer"] is None  # recorded like an answer
    # a replay: the record decides, byte for byte, and the judge is not asked again
    again_judge, again = ScriptedJudge(fail=10**6), FakeSink()
    await runner(again_judge, store, again).run(batch)
    assert again_judge.calls == []
    assert [m for m in again.messages if m.topic != "t.audit"] == [
        m for m in sink.messages if m.topic != "t.audit"
    ]


async def test_a_refusal_for_good_still_stops_the_worker() -> None:
    from streams.errors import JudgeRefused

    class Refusing(ScriptedJudge):
        async def ask(self, messages: Sequence[dict[str, str]], *, model: str) -> str:
            raise JudgeRefused("the judge refused the call (401)")

    sink = FakeSink()
    with pytest.raises(JudgeRefused):
        await runner(Refusing(), MemoryLedgerStore(), sink).run(handed("upstream 超时配置过短"))
    assert sink.messages == []


# --- a stored value is read again, never taken at its word ---------------------------------------------


def _key_of(record: Record) -> tuple[str, str]:
    step = run_station(Station.SEMANTIC, record, RULES)
    assert isinstance(step, PendingJudge)
    return step.key


def _answered(record: Record, label: str) -> dict[str, Any]:
    """A record of the case as the station writes it, its answer labelling the conclusion ``label``."""
    step = run_station(Station.SEMANTIC, record, RULES)
    assert isinstance(step, PendingJudge)
    return judged(step, {"conclusion.content": label})


def _corrupt(record: Record) -> bytes:
    return b"\x00not json"


def _claims_only(record: Record) -> bytes:
    return codec.dumps({"claims": []})


def _labels_over_answer(record: Record) -> bytes:
    kept = _answered(record, "unsupported")
    return codec.dumps({**kept, "claims": [{**c, "label": "supported"} for c in kept["claims"]]})


def _other_model(record: Record) -> bytes:
    return codec.dumps({**_answered(record, "supported"), "model": "another"})


@pytest.mark.parametrize(
    ("stored", "asked", "verdict"),
    [
        (_corrupt, True, "REJECT"),  # JSONDecodeError in start(): the worker's crash loop
        (_claims_only, True, "REJECT"),  # KeyError in finish: a dead letter, no verdict in enforce
        (_labels_over_answer, False, "REJECT"),  # a PASS signed from labels its answer does not give
        (_other_model, True, "REJECT"),
    ],
    ids=["corrupt", "claims-only", "labels-over-answer", "other-model"],
)
async def test_a_stored_value_that_does_not_hold_is_never_taken_at_its_word(
    stored: Any, asked: bool, verdict: str, caplog: pytest.LogCaptureFixture
) -> None:
    (record,) = handed("the root cause is upstream")  # the judge: unsupported
    run_id, digest = _key_of(record)
    store, sink = MemoryLedgerStore(), FakeSink()
    await store.record_judgements([(run_id, digest, stored(record))])
    judge = ScriptedJudge()
    semantic = runner(judge, store, sink)
    with caplog.at_level("WARNING", logger="streams.worker.judging"):
        outcomes = await semantic.run([record])
    assert [o.rejection for o in outcomes] == [None]
    assert [v["verdict"] for v in sink.values("t.verdicts")] == [verdict]
    assert [x["code"] for x in sink.values("t.verdicts")[0]["violations"]] == ["CLAIM_SEMANTIC_UNSUPPORTED"]
    assert (judge.calls == ["the root cause is upstream"]) == asked
    warned = [r.getMessage() for r in caplog.records if "not a judgement of its case" in r.getMessage()]
    assert (len(warned), all(digest in line for line in warned)) == ((1, True) if asked else (0, True))
    counted = "evidence_chain_judgement_records_invalid_total 1.0" in semantic.metrics.render().decode()
    assert counted == asked


async def test_a_case_recorded_while_its_lookup_is_out_is_not_asked_twice() -> None:
    """The batch before records its call and drops it from the calls out while this batch's lookup is
    out (its GET answered before the record): the case is shared, never asked of the model again."""
    gate = asyncio.Event()
    gate.set()

    class SlowLookup(MemoryLedgerStore):
        async def recorded_judgements(self, keys: Sequence[tuple[str, str]]) -> list[bytes | None]:
            found = await super().recorded_judgements(keys)  # read now, answered later
            await gate.wait()
            return found

    judge, store, sink = ScriptedJudge(hold=True), SlowLookup(), FakeSink()
    semantic = runner(judge, store, sink)
    first = await semantic.start(handed("X: upstream 超时"))
    gate.clear()
    second_started = asyncio.ensure_future(semantic.start(handed("X: upstream 超时", start=1)))
    await asyncio.sleep(0.01)
    judge.release("X: upstream 超时")
    await first.delivered()  # recorded, and dropped from the calls out
    gate.set()
    second = await second_started
    await second.delivered()
    assert judge.calls == ["X: upstream 超时"]
    assert [v["verdict"] for v in sink.values("t.verdicts")] == ["PASS", "PASS"]
