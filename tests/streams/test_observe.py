"""What an operator sees, without a broker: the outcome labels, the counters a batch moves, the stall
rule of ``/livez``, the audit sink's health, and log lines (JSON and text) about one record."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import logging.config
import time
from typing import Any

import faust
import pytest
from prometheus_client.parser import text_string_to_metric_families

from models.limits import GuardSettings
from models.vocab import DeadLetterReason, Station, ViolationCode
from streams import codec
from streams.audit.sink import SinkStats, health
from streams.messages import Record
from streams.observe.logs import JsonFormatter, logging_config, record_fields
from streams.observe.metrics import PHASES, WorkerMetrics, outcome_label
from streams.settings import Settings
from streams.stations.review import RULES_VERSION
from streams.worker.runner import BatchRunner, RunnerConfig
from tests.streams.conftest import FakeSink
from tests.streams.loop_fakes import RAW, FakeProbe, Loop, event
from tests.support import memory_ledger

SETTINGS = Settings(topic_prefix="t.")
CONFIG = RunnerConfig.from_settings(SETTINGS)


def samples(metrics: WorkerMetrics, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    out = {}
    for family in text_string_to_metric_families(metrics.render().decode()):
        for sample in family.samples:
            if sample.name == name:
                out[tuple(sorted(sample.labels.items()))] = sample.value
    return out


def record(value: bytes, offset: int = 0) -> Record:
    return Record("t.in", 0, offset, 1_700_000_000_000, None, value)


async def test_each_record_gets_one_outcome_and_dead_letters_their_reason() -> None:
    runner = BatchRunner(Station.POSTPROCESS, CONFIG, FakeSink())
    batch = [record(v, i) for i, v in enumerate([*RAW[:3], b"not json", b'{"run_id": "r"}'])]
    outcomes = await runner.run(batch)
    metrics = WorkerMetrics()
    metrics.start_agent(Station.POSTPROCESS)
    metrics.batch(Station.POSTPROCESS, outcomes, 0.2, 0)
    counted = samples(metrics, "evidence_chain_records_total")
    labels = [outcome_label(o) for o in outcomes]
    assert sum(counted.values()) == len(batch)
    assert counted[(("agent", "postprocess"), ("outcome", "dead_letter"))] == labels.count("dead_letter") >= 2
    reasons = samples(metrics, "evidence_chain_dead_letters_total")
    assert sum(reasons.values()) == labels.count("dead_letter")
    assert {labels for labels, value in reasons.items() if value} == {
        (("agent", "postprocess"), ("reason", r)) for r in ("MALFORMED_JSON", "INVALID_ID")
    }
    assert set(reasons) == {(("agent", "postprocess"), ("reason", r)) for r in DeadLetterReason}  # from 0
    assert samples(metrics, "evidence_chain_batch_seconds_count") == {(("agent", "postprocess"),): 1.0}
    assert counted[(("agent", "postprocess"), ("outcome", "pass"))] == 0  # every series shown from 0


async def test_ledger_and_guard_outcomes_are_labelled_as_operators_read_them() -> None:
    ledger = memory_ledger()
    project = BatchRunner(Station.PROJECT, CONFIG, sink := FakeSink())
    post = await BatchRunner(Station.POSTPROCESS, CONFIG, post_sink := FakeSink()).run([record(RAW[0])])
    assert outcome_label(post[0]) == "ok"
    await project.run([record(post_sink.on("t.postprocessed")[0].value)])
    projected = sink.on("t.projected")[0].value
    writer = BatchRunner(Station.LEDGER, CONFIG, FakeSink(), ledger)
    first, again = await writer.run([record(projected, 0), record(projected, 1)])
    assert [outcome_label(first), outcome_label(again)] == ["ok", "duplicate"]
    entry = codec.loads(projected)
    draft = codec.dumps(
        {
            "run_id": "run-golden-1",
            "draft_id": "d1",
            "analysis": [
                {"id": "a1", "kind": "NORMAL", "content": "x", "tool_call_ids": [entry["tool_call_id"]]}
            ],
            "limitations": ["l"],
        }
    )
    guard = BatchRunner(Station.GUARD, CONFIG, FakeSink(), ledger)
    (verdict,) = await guard.run([record(draft)])
    assert outcome_label(verdict) in {"pass", "reject", "fallback"}
    assert outcome_label(verdict) == verdict.audit["verdict"].lower()

    # violations by code, once per draft; drafts the review of claims refused
    metrics = WorkerMetrics()
    metrics.start_agent(Station.GUARD)
    assert samples(metrics, "evidence_chain_review_refusals_total") == {(): 0.0}
    assert len(samples(metrics, "evidence_chain_violations_total")) == len(ViolationCode)  # from 0
    call = entry["tool_call_id"]
    unsupported = {"id": "a1", "kind": "NORMAL", "tool_call_ids": [call], "content": "超时 987654321 秒"}
    claims = {**codec.loads(draft), "draft_id": "d2", "analysis": [unsupported, {**unsupported, "id": "a2"}]}
    foreign = {**codec.loads(draft), "draft_id": "d3"}
    foreign["analysis"] = [{"id": "a1", "kind": "NORMAL", "content": "x", "tool_call_ids": ["call-unknown"]}]
    judged = await guard.run([record(codec.dumps(claims)), record(codec.dumps(foreign))])
    codes = [outcome.audit["violation_codes"] for outcome in judged]
    assert codes[0].count("CLAIM_NUMBER_UNSUPPORTED") == 2 and "CITATION_NOT_FOUND" in codes[1]
    metrics.batch(Station.GUARD, [verdict, *judged], 0.1, 2)
    by_code = {
        dict(labels)["code"]: value
        for labels, value in samples(metrics, "evidence_chain_violations_total").items()
    }
    assert by_code["CLAIM_NUMBER_UNSUPPORTED"] == 1  # two items, one draft
    assert by_code["CITATION_NOT_FOUND"] == 1
    assert samples(metrics, "evidence_chain_review_refusals_total") == {(): 1.0}  # d2 only

    # the version of the review's rules a verdict was judged by: in its audit figures and the metrics
    assert {outcome.audit["review_rules"] for outcome in (verdict, *judged)} == {RULES_VERSION}
    assert samples(metrics, "evidence_chain_review_rules_info") == {(("version", RULES_VERSION),): 1.0}
    review_off = SETTINGS.model_copy(update={"guard": GuardSettings(review="off")})
    unreviewing = RunnerConfig.from_settings(review_off)
    off = BatchRunner(Station.GUARD, unreviewing, FakeSink(), ledger)
    (unreviewed,) = await off.run([record(codec.dumps(claims))])
    assert unreviewed.audit["review_rules"] is None and not unreviewed.audit["violation_codes"]


async def test_the_event_loop_lag_is_how_much_later_than_asked_the_probe_woke() -> None:
    metrics = WorkerMetrics()
    times = iter([100.0, 100.0 + 0.001 + 0.3, 200.0, 200.001])  # late by 0.3 s, then on time

    def clock() -> float:
        try:
            return next(times)
        except StopIteration:  # the third round: stop the probe
            raise asyncio.CancelledError from None

    with pytest.raises(asyncio.CancelledError):
        await metrics.watch_loop(0.001, clock)
    assert samples(metrics, "evidence_chain_event_loop_lag_seconds_count") == {(): 2.0}
    assert samples(metrics, "evidence_chain_event_loop_lag_seconds_sum")[()] == pytest.approx(0.3)
    buckets = samples(metrics, "evidence_chain_event_loop_lag_seconds_bucket")
    assert buckets[(("le", "0.25"),)] == 1 and buckets[(("le", "0.5"),)] == 2


def test_commits_and_readiness_are_shown_from_zero_and_counted() -> None:
    metrics = WorkerMetrics()
    metrics.start_agent(Station.LEDGER)
    assert samples(metrics, "evidence_chain_commits_total") == {(("agent", "ledger"),): 0.0}
    metrics.committed(Station.LEDGER)
    assert samples(metrics, "evidence_chain_commits_total") == {(("agent", "ledger"),): 1.0}
    assert samples(metrics, "evidence_chain_ready") == {(): 0.0}
    metrics.set_ready(True)
    assert samples(metrics, "evidence_chain_ready") == {(): 1.0}
    assert samples(metrics, "process_start_time_seconds")  # the process collector, for restarts


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_an_agent_is_stalled_only_when_it_makes_no_progress_while_it_has_work() -> None:
    app = faust.App("observe-test", broker="memory://", value_serializer="raw", key_serializer="raw")
    clock = Clock()
    fixture = Loop(app, FakeProbe({("t.raw-hits", 0): 0}))
    loop = fixture.loop
    loop.clock = clock
    loop.last_progress = clock.now
    loop.on_wait(True)  # idle on an empty channel
    clock.now += 500
    assert loop.stalled({}, 60) is None  # idle for long, nothing to do: fine
    assert loop.stalled({("t.raw-hits", 0): 0}, 60) is None
    assert "waiting" in (loop.stalled({("t.raw-hits", 0): 7}, 60) or "")  # records not delivered
    loop.on_wait(False)  # a batch arrived
    clock.now += 30
    assert loop.stalled({}, 60) is None
    clock.now += 31
    assert "one batch for 61s" in (loop.stalled({}, 60) or "")  # wedged in its batch
    loop.on_hold(5.0)  # an outage holds the batch: readiness reports it, liveness does not
    assert loop.stalled({}, 60) is None and loop.held_seconds() == 5.0
    loop.on_hold(None)
    await loop.process([event(app, 0, RAW[0])])
    assert loop.stalled({}, 60) is None  # progress made
    # a batch that moves on without finishing (a judge answered one of its cases) is no stall either
    assert loop.runner.on_progress == loop.progressed
    clock.now += 50
    loop.runner.on_progress()
    clock.now += 50
    assert loop.stalled({}, 60) is None
    clock.now += 11
    assert "one batch for 61s" in (loop.stalled({}, 60) or "")


def test_the_audit_sink_is_live_while_its_loop_turns_and_ready_while_assigned() -> None:
    stats = SinkStats()
    (live, _), (ready, body) = health(stats, 60)
    assert live and not ready and "kafka" in body["problems"]
    stats.assigned = True
    assert health(stats, 60)[1][0] is True
    stats.holding = True
    assert "database" in health(stats, 60)[1][1]["problems"]
    stats.ticked = time.monotonic() - 120
    assert health(stats, 60)[0][0] is False


def handler_output(log_format: str, emit: Any) -> str:
    stream = io.StringIO()
    config = logging_config(log_format, "info")
    config["handlers"]["stderr"]["stream"] = stream
    logging.config.dictConfig(config)
    try:
        emit(logging.getLogger("streams.worker.app"))
    finally:
        logging.config.dictConfig(logging_config("text", "warning"))
    return stream.getvalue()


@pytest.mark.parametrize("log_format", ["json", "text"])
def test_a_line_about_a_record_carries_its_coordinates(log_format: str) -> None:
    hostile = "run\n[CRITICAL] forged\x1b[31m"
    fields = record_fields(
        Record("t.raw-hits", 2, 41, None, None, b""),
        agent="postprocess",
        run_id=hostile,
        tool_call_id="call-1",
        event_id="postprocess:t.raw-hits:2:41:-",
        reason="SCHEMA_VIOLATION",
    )
    out = handler_output(log_format, lambda log: log.warning("dead letter for %s", hostile, extra=fields))
    assert out.count("\n") == 1  # one line: the newline in the id cannot start another
    assert "\x1b" not in out
    if log_format == "json":
        line = json.loads(out)
        assert line["level"] == "warning" and line["agent"] == "postprocess" and line["offset"] == 41
        assert line["run_id"] == "run\\n[CRITICAL] forged\\x1b[31m"
        assert line["topic"] == "t.raw-hits" and line["partition"] == 2 and line["tool_call_id"] == "call-1"
        assert line["event_id"] == "postprocess:t.raw-hits:2:41:-"
    else:
        assert "tool_call_id=call-1" in out and "offset=41" in out and "[WARNING]" in out


def test_json_lines_carry_exceptions_as_one_field() -> None:
    def emit(log: logging.Logger) -> None:
        try:
            raise ValueError("boom")
        except ValueError:
            log.exception("failed")

    line = json.loads(handler_output("json", emit))
    assert "ValueError: boom" in line["exc"] and line["message"] == "failed"
    assert isinstance(JsonFormatter(), logging.Formatter)


def phases(metrics: WorkerMetrics, agent: str) -> dict[str, float]:
    return {
        dict(labels)["phase"]: value
        for labels, value in samples(metrics, "evidence_chain_agent_seconds_total").items()
        if dict(labels)["agent"] == agent
    }


class SlowStore:
    """A ledger store whose every round trip takes ``delay`` seconds."""

    def __init__(self, delay: float) -> None:
        self.inner, self.delay = memory_ledger(), delay

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def write_many(self, entries: Any, **options: Any) -> Any:
        await asyncio.sleep(self.delay)
        return await self.inner.write_many(entries, **options)


async def test_an_agents_time_is_told_by_phase_waiting_for_records_its_station_and_redis() -> None:
    app = faust.App("phases-test", broker="memory://", value_serializer="raw", key_serializer="raw")
    clock = Clock()
    loop = Loop(app, FakeProbe({("t.raw-hits", 0): 0})).loop
    assert phases(loop.metrics, "postprocess") == dict.fromkeys(PHASES, 0)  # shown from 0
    loop.clock = clock
    loop.on_wait(True)
    clock.now += 2.5
    loop.on_wait(False)
    assert phases(loop.metrics, "postprocess")["records"] == 2.5  # exactly the wait on an empty channel

    loop.clock = time.monotonic
    await loop.process([event(app, 0, RAW[0]), event(app, 1, RAW[1])])
    spent = phases(loop.metrics, "postprocess")
    assert spent["station"] > 0
    assert spent["redis"] == 0  # postprocess has no Redis effect

    runner = BatchRunner(Station.LEDGER, CONFIG, FakeSink(), SlowStore(0.05))  # type: ignore[arg-type]
    post = await BatchRunner(Station.POSTPROCESS, CONFIG, post_sink := FakeSink()).run([record(RAW[0])])
    assert post
    await BatchRunner(Station.PROJECT, CONFIG, sink := FakeSink()).run(
        [record(post_sink.on("t.postprocessed")[0].value)]
    )
    await runner.run([record(sink.on("t.projected")[0].value)])
    assert runner.redis_seconds >= 0.05  # the round trip, counted where it is spent
