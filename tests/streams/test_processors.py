"""The four stations through their batch runner with fakes: outputs, dead letters, audit, write-once,
retry-and-hold."""

from __future__ import annotations

import asyncio

from models.vocab import DeadLetterReason, LedgerOutcome, LedgerStatus, Station
from streams import codec
from streams.hashing import sha256_hex
from streams.ledger.memory import MemoryLedgerStore
from streams.messages import Record
from tests.streams.conftest import FakeSink, golden_lines, handle, records, run_chain

RAW = golden_lines("pipe", "input.jsonl")
EXPECTED_PROJECTIONS = golden_lines("pipe", "expected_projection.jsonl")


async def test_postprocess_emits_lookups_dead_letters_and_one_audit_per_input(settings, sink):
    await handle(Station.POSTPROCESS, settings, sink, records("t.raw-hits", RAW))
    lookups = sink.values("t.postprocessed")
    letters = sink.values("t.dead-letters")
    audits = sink.values("t.audit")
    rejected = [e for e in EXPECTED_PROJECTIONS if e.startswith(b'{"dead_letter"')]
    with_ids = [codec.loads(e)["dead_letter"] for e in rejected if codec.loads(e)["dead_letter"]["run_id"]]
    assert len(letters) == len(rejected) == 9
    # a rejected record with valid ids travels on as FAILED so the ledger can record it
    assert len(lookups) == len(RAW) - len(rejected) + len(with_ids)
    failed = [lk for lk in lookups if lk["status"] == "FAILED"]
    assert [(f["tool_call_id"], f["failure_reason"]) for f in failed] == [
        (d["tool_call_id"], d["reason"]) for d in with_ids
    ]
    assert all(
        set(f)
        == {"run_id", "tool_call_id", "event_id", "origin", "source_timestamp", "status", "failure_reason"}
        for f in failed
    )
    stations = [a["station"] for a in audits]
    assert stations.count("postprocess") == len(RAW)
    assert stations.count("dead-letter") == len(rejected)


async def test_lookup_values_carry_origin_and_deterministic_event_ids(settings, sink):
    await handle(Station.POSTPROCESS, settings, sink, records("t.raw-hits", RAW[:1], partition=2, start=40))
    lookup = sink.values("t.postprocessed")[0]
    assert lookup["origin"] == {
        "topic": "t.raw-hits",
        "partition": 2,
        "offset": 40,
        "timestamp": 1_700_000_000_040,
    }
    assert lookup["event_id"] == "postprocess:t.raw-hits:2:40:1700000000040"
    assert lookup["source_timestamp"] == 1_700_000_000_040
    assert sink.on("t.postprocessed")[0].key == b"run-golden-1"
    expected = codec.loads(golden_lines("pipe", "expected_lookup.jsonl")[0])
    shown = {
        k: v
        for k, v in lookup.items()
        if k not in ("status", "failure_reason", "event_id", "origin", "source_timestamp")
    }
    assert shown == {k: v for k, v in expected.items() if k not in ("event_id", "origin", "source_timestamp")}


async def test_dead_letter_keeps_original_bytes_and_coordinates(settings, sink):
    bad = b'{"run_id": "r1", "tool_call_id": \xff'
    await handle(Station.POSTPROCESS, settings, sink, records("t.raw-hits", [bad], start=7))
    (letter,) = sink.values("t.dead-letters")
    assert letter["reason"] == DeadLetterReason.MALFORMED_JSON
    assert letter["source"] == {
        "topic": "t.raw-hits",
        "partition": 0,
        "offset": 7,
        "timestamp": 1_700_000_000_007,
    }
    assert letter["value_encoding"] == "base64" and letter["value_bytes"] == len(bad)
    assert letter["value_sha256"] == sha256_hex(bad)
    assert sink.values("t.postprocessed") == []


async def test_chain_writes_golden_projection_bytes_ready_and_failed_entries(settings):
    sink, store = await run_chain(settings, RAW)
    expected = {}
    for raw, exp in zip(RAW, EXPECTED_PROJECTIONS, strict=True):
        doc = codec.loads(exp)
        if "dead_letter" not in doc:
            src = codec.loads(raw)
            expected[(src["run_id"], src["tool_call_id"])] = exp
    ready = {k: e for k, e in store.entries.items() if e["status"] == LedgerStatus.READY}
    assert {k: e["projection"].encode() for k, e in ready.items()} == expected
    assert all(e["projection_sha256"] == sha256_hex(e["projection"].encode()) for e in ready.values())
    failed = {k: e["failure_reason"] for k, e in store.entries.items() if e["status"] == LedgerStatus.FAILED}
    assert failed == {
        ("run-bad-1", "call_1"): "SCHEMA_VIOLATION",
        ("run-bad-1", "call_2"): "SCHEMA_VIOLATION",
        ("run-bad-1", "call_3"): "SCHEMA_VIOLATION",
        ("run-bad-1", "call_4"): "SCHEMA_VIOLATION",
        ("run-bad-1", "call_5"): "SCHEMA_VIOLATION",
    }
    ledger = sink.values("t.ledger")
    assert len(ledger) == len(store.entries)
    assert all(m["event_id"].startswith("ledger:t.raw-hits:0:") for m in ledger)
    assert all(m["written_at"] and m["expires_at"] > m["written_at"] for m in ledger)
    stations = [a["station"] for a in sink.values("t.audit")]
    assert stations.count("project") == len(sink.values("t.postprocessed"))
    assert stations.count("ledger") == len(store.entries)


async def test_redelivery_repeats_identical_bytes_except_audit(settings):
    first, ledger = await run_chain(settings, RAW)
    second, _ = await run_chain(settings, RAW, ledger)  # re-delivered: the same ledger state
    for topic in ("t.postprocessed", "t.projected", "t.ledger", "t.dead-letters"):
        assert [m.value for m in first.on(topic)] == [m.value for m in second.on(topic)], topic


async def test_ledger_write_once_duplicate_and_conflict(settings, sink, store):
    _, seeded = await run_chain(settings, RAW[:1])
    projected = [m.value for m in (await run_chain(settings, RAW[:1]))[0].on("t.projected")]
    store.entries.update(seeded.entries)
    await handle(Station.LEDGER, settings, sink, records("t.projected", projected), store)
    assert sink.values("t.audit")[-1]["fields"]["outcome"] == LedgerOutcome.DUPLICATE
    before = dict(store.entries)
    changed = codec.loads(projected[0])
    changed["projection"] = changed["projection"].replace("网关超时先检查", "改过的内容")
    changed["projection_sha256"] = sha256_hex(changed["projection"].encode())
    await handle(
        Station.LEDGER, settings, sink, records("t.projected", [codec.dumps(changed)], start=99), store
    )
    assert store.entries == before  # what the agent was shown is never overwritten
    letter = sink.values("t.dead-letters")[-1]
    assert letter["reason"] == DeadLetterReason.LEDGER_CONFLICT
    assert sink.values("t.audit")[-1]["fields"]["outcome"] == LedgerOutcome.CONFLICT
    # the ledger topic repeats the stored entry for the duplicate, never the conflicting one
    assert [m["projection_sha256"] for m in sink.values("t.ledger")] == [
        before[("run-golden-1", "call_x1")]["projection_sha256"]
    ]


async def test_ledger_conflict_on_failed_write_is_audited_only(settings, sink, store):
    await run_chain(settings, RAW[19:20])  # a FAILED write for run-bad-1/call_1 in another store
    failed = {
        "run_id": "run-bad-1",
        "tool_call_id": "call_1",
        "status": "FAILED",
        "failure_reason": "SCHEMA_VIOLATION",
        "origin": {"topic": "t.raw-hits", "partition": 0, "offset": 1, "timestamp": 1},
    }
    await handle(Station.LEDGER, settings, sink, records("t.projected", [codec.dumps(failed)]), store)
    ok = dict(
        failed,
        status="OK",
        failure_reason=None,
        projection='{"x":1}',
        projection_sha256=sha256_hex(b'{"x":1}'),
    )
    await handle(Station.LEDGER, settings, sink, records("t.projected", [codec.dumps(ok)], start=1), store)
    failed_again = dict(failed, failure_reason="PROJECTION_BUDGET_EXCEEDED")
    await handle(
        Station.LEDGER, settings, sink, records("t.projected", [codec.dumps(failed_again)], start=2), store
    )
    reasons = [d["reason"] for d in sink.values("t.dead-letters")]
    assert reasons == ["LEDGER_CONFLICT"]  # the READY attempt; the FAILED one is audited only
    outcomes = [a["fields"]["outcome"] for a in sink.values("t.audit") if a["station"] == "ledger"]
    assert outcomes == ["WRITTEN", "CONFLICT", "DUPLICATE"]


async def test_ledger_rejects_invalid_ids_without_writing(settings, sink, store):
    bad = {
        "run_id": "run:x",
        "tool_call_id": "c",
        "status": "OK",
        "projection": "{}",
        "projection_sha256": sha256_hex(b"{}"),
    }
    await handle(Station.LEDGER, settings, sink, records("t.projected", [codec.dumps(bad), b"[1]"]), store)
    assert store.entries == {}
    assert [d["reason"] for d in sink.values("t.dead-letters")] == ["INVALID_ID", "MALFORMED_JSON"]


def guard_store() -> MemoryLedgerStore:
    store = MemoryLedgerStore()
    store.load(codec.loads(line) for line in golden_lines("guard", "ledger.jsonl"))
    return store


def comparable(verdict: dict) -> dict:
    out = {k: v for k, v in verdict.items() if k not in ("event_id", "origin", "source_timestamp")}
    out["violations"] = sorted((v["code"], v["path"]) for v in verdict["violations"])
    return out


async def test_guard_reproduces_golden_verdicts_in_one_read_per_batch(settings, sink):
    store = guard_store()
    drafts = golden_lines("guard", "drafts.jsonl")
    await handle(Station.GUARD, settings, sink, records("t.diagnosis-drafts", drafts), store)
    verdicts = sink.values("t.verdicts")
    expected = [codec.loads(line) for line in golden_lines("guard", "expected_verdicts.jsonl")]
    assert [comparable(v) for v in verdicts] == [comparable(e) for e in expected]
    assert store.reads == 1
    assert verdicts[0]["event_id"] == "guard:t.diagnosis-drafts:0:0:1700000000000"
    violations = sink.values("t.violations")
    assert len(violations) == sum(v["violation_count"] for v in verdicts)
    assert violations[0]["event_id"] == f"{verdicts[2]['event_id']}#0"


async def test_guard_holds_while_the_ledger_is_down_and_never_passes_unread(settings, sink):
    store = guard_store()
    store.down = True
    drafts = golden_lines("guard", "drafts.jsonl")[:1]
    task = asyncio.create_task(
        handle(Station.GUARD, settings, sink, records("t.diagnosis-drafts", drafts), store)
    )
    await asyncio.sleep(0.05)
    assert not task.done() and sink.messages == []  # held: no verdict, nothing acked
    store.down = False
    await asyncio.wait_for(task, 2)
    assert [v["verdict"] for v in sink.values("t.verdicts")] == ["PASS"]


async def test_sends_are_retried_until_the_broker_acknowledges(settings):
    sink = FakeSink(failures=3)
    await handle(Station.POSTPROCESS, settings, sink, records("t.raw-hits", RAW[:2]))
    assert sink.attempts == 4
    assert len(sink.values("t.postprocessed")) == 2


async def test_unexpected_exception_is_an_internal_error_dead_letter(settings, sink, monkeypatch):
    import streams.pipeline as pipeline

    def boom(*args, **kwargs):
        raise RuntimeError("station bug")

    monkeypatch.setattr(pipeline, "postprocess", boom)
    await handle(Station.POSTPROCESS, settings, sink, records("t.raw-hits", RAW[:1]))
    (letter,) = sink.values("t.dead-letters")
    assert letter["reason"] == "INTERNAL_ERROR" and "station bug" in letter["error"]
    assert sink.values("t.postprocessed") == []  # no FAILED entry: a fixed replay can still succeed


def test_record_where_names_the_record():
    assert Record("t.raw-hits", 1, 5, None, None, b"").where == "t.raw-hits[1]@5"


def test_dead_letter_of_utf8_text_cut_mid_character_stays_text():
    from streams.envelope import dead_letter

    value = "网关超时".encode()  # 12 bytes, 3 per character
    letter = dead_letter(
        {"reason": DeadLetterReason.MALFORMED_JSON, "error": "e", "run_id": None, "tool_call_id": None},
        station=Station.POSTPROCESS,
        origin=None,
        record=Record("t", 0, 1, None, None, value),
        max_value_bytes=7,
    )
    assert (letter["value"], letter["value_encoding"], letter["value_bytes"]) == ("网关", "utf-8", 12)
    assert letter["value_sha256"] == sha256_hex(value)
