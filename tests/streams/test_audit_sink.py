"""The audit sink's store without Kafka: dedupe by event_id, "latest" by origin order, verdict rows."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from models.vocab import Station
from streams import codec
from streams.audit.factory import open_store
from streams.audit.store import AuditStore, check_record
from tests.streams.audit_records import T0, chain, dead_letter, guard, one_run, tool_call
from tests.streams.conftest import golden_lines, handle, records, run_chain


@pytest.fixture
def audit(tmp_path: Path) -> Iterator[AuditStore]:
    store = open_store(tmp_path / "audit.db")
    yield store
    store.close()


def test_rows_equal_distinct_events_and_a_replay_adds_none(audit: AuditStore) -> None:
    batch = one_run()
    assert audit.apply(batch) == len(batch) == 12
    assert audit.counts() == {"events": 12, "tool_calls": 3, "verdicts": 2}

    # A re-delivered input repeats its audit records with the same event_id, a new processed_at and
    # the ledger outcome of the repeat: nothing changes, nothing is added.
    later = T0 + timedelta(hours=1)
    replay = [*chain("run-1", "call_a", 0, outcome="DUPLICATE", now=later), *batch]
    assert audit.apply(replay) == 0
    assert audit.counts() == {"events": 12, "tool_calls": 3, "verdicts": 2}
    assert audit.stats.replays == len(replay)
    assert tool_call(audit, "run-1", "call_a")["ledger_outcome"] == "WRITTEN"


def test_duplicates_within_one_batch_count_once(audit: AuditStore) -> None:
    batch = chain("run-1", "call_a", 0)
    assert audit.apply(batch + batch + batch) == 3
    assert audit.counts()["events"] == 3


def test_tool_invocation_row_holds_every_stations_figures(audit: AuditStore) -> None:
    audit.apply(one_run())
    call = tool_call(audit, "run-1", "call_c")
    assert call["postprocess_status"] == "OK"
    assert (call["candidate_count"], call["evidence_block_count"], call["relevance_level"]) == (
        3,
        2,
        "PRECISE",
    )
    assert call["low_quality"] is False and call["truncated"] is False
    assert call["retrieval_trace"] == {"mode": "hybrid"}
    assert (call["project_status"], call["evidence_status"], call["returned_count"]) == (
        "OK",
        "EVIDENCE_FOUND",
        2,
    )
    assert call["projection_sha256"] == f"{2:064x}"
    assert (call["ledger_status"], call["ledger_outcome"]) == ("READY", "WRITTEN")
    assert (call["dead_letter_reason"], call["dead_letter_station"]) == ("LEDGER_CONFLICT", "ledger")
    assert (call["origin_partition"], call["origin_offset"]) == (0, 2)
    # The SPEC's table is queryable with plain SQL.
    rows = audit.conn.execute(
        "SELECT kind, tool_call_id, candidate_count FROM tool_invocation WHERE run_id = 'run-1' "
        "ORDER BY kind, tool_call_id"
    ).fetchall()
    assert [tuple(r) for r in rows] == [
        ("tool_call", "call_a", 3),
        ("tool_call", "call_b", 3),
        ("tool_call", "call_c", 3),
        ("verdict", None, None),
        ("verdict", None, None),
    ]


def test_an_older_replayed_record_does_not_overwrite_newer_figures(audit: AuditStore) -> None:
    # The harness sent call_a twice; the later raw-hits record (offset 10) is applied first.
    audit.apply(chain("run-1", "call_a", 10, candidates=7, outcome="DUPLICATE"))
    audit.apply(chain("run-1", "call_a", 3, candidates=2, outcome="WRITTEN"))  # older, arrives later
    call = tool_call(audit, "run-1", "call_a")
    assert (call["candidate_count"], call["ledger_outcome"], call["origin_offset"]) == (7, "DUPLICATE", 10)
    assert audit.counts()["events"] == 6  # both are kept in audit_events
    audit.apply(chain("run-1", "call_a", 12, candidates=9))
    assert tool_call(audit, "run-1", "call_a")["candidate_count"] == 9


def test_across_partitions_the_origin_timestamp_orders(audit: AuditStore) -> None:
    audit.apply(chain("run-1", "call_a", 50, partition=1, candidates=5))  # timestamp ...050
    audit.apply(chain("run-1", "call_a", 20, partition=2, candidates=4))  # timestamp ...020: older
    assert tool_call(audit, "run-1", "call_a")["candidate_count"] == 5


def test_dead_letters_of_one_origin_keep_the_later_station(audit: AuditStore) -> None:
    later = dead_letter("run-1", "call_a", 4, Station.LEDGER, "LEDGER_CONFLICT")
    earlier = dead_letter("run-1", "call_a", 4, Station.POSTPROCESS, "SCHEMA_VIOLATION")
    audit.apply([later, earlier])
    assert tool_call(audit, "run-1", "call_a")["dead_letter_reason"] == "LEDGER_CONFLICT"


def test_one_verdict_row_per_guard_audit(audit: AuditStore) -> None:
    audit.apply(one_run())
    _, verdicts = audit.run_trail("run-1")
    assert [(v["attempt"], v["verdict"], v["violation_codes"]) for v in verdicts] == [
        (1, "REJECT", ["CITATION_NOT_FOUND", "LIMITATIONS_MISSING"]),
        (2, "PASS", []),
    ]
    assert verdicts[0]["cited_tool_call_ids"] == ["call_a", "call_b"]
    assert verdicts[0]["event_id"] == "guard:t.diagnosis-drafts:0:0:1700000100000"
    audit.apply([guard("run-1", 0, 1, "REJECT", ["CITATION_NOT_FOUND"])])  # a re-delivered draft
    assert audit.counts()["verdicts"] == 2


def test_malformed_records_are_counted_and_skipped(audit: AuditStore) -> None:
    good = chain("run-1", "call_a", 0)[0]
    no_id = {k: v for k, v in good.items() if k != "event_id"}
    bad_station = {**good, "event_id": "x:1", "station": "nowhere"}
    bad_source = {**good, "event_id": "x:2", "source": {"topic": "t", "partition": "0", "offset": 1}}
    values = [
        ("t.audit[0]@0", b"not json"),
        ("t.audit[0]@1", b"[1, 2]"),
        ("t.audit[0]@2", None),
        ("t.audit[0]@3", codec.dumps(no_id)),
        ("t.audit[0]@4", codec.dumps(bad_station)),
        ("t.audit[0]@5", codec.dumps(bad_source)),
        ("t.audit[0]@6", codec.dumps(good)),
    ]
    assert audit.apply_values(values) == 1
    assert (audit.stats.malformed, audit.stats.inserted) == (6, 1)
    # apply() checks the shape too: a record built wrongly is skipped, not raised.
    assert audit.apply([{"event_id": "x:3"}, chain("run-1", "call_b", 1)[0]]) == 1  # type: ignore[list-item]
    assert audit.stats.malformed == 7
    assert audit.counts()["events"] == 2


def test_check_record_names_the_field() -> None:
    record = dict(chain("run-1", "call_a", 0)[0])
    record["fields"] = []
    with pytest.raises(Exception, match="fields must be an object"):
        check_record(record)


def test_a_file_that_is_not_sqlite_is_a_configuration_error(tmp_path: Path) -> None:
    path = tmp_path / "audit.db"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(Exception, match="EC_AUDIT_DB"):
        open_store(path)


def test_readers_see_committed_rows_while_the_writer_is_open(audit: AuditStore, tmp_path: Path) -> None:
    audit.apply(one_run())
    reader = open_store(tmp_path / "audit.db", readonly=True)
    try:
        assert reader.counts() == {"events": 12, "tool_calls": 3, "verdicts": 2}
        with pytest.raises(sqlite3.OperationalError):
            reader.conn.execute("DELETE FROM audit_events")
    finally:
        reader.close()


async def test_audit_records_of_the_real_processors(audit: AuditStore, settings) -> None:
    """Golden raw-hits through postprocess → project → ledger, then golden drafts through the guard."""
    sink, ledger = await run_chain(settings, golden_lines("pipe", "input.jsonl"))
    await handle(
        Station.GUARD,
        settings,
        sink,
        records("t.diagnosis-drafts", golden_lines("guard", "drafts.jsonl")),
        ledger,
    )
    audits = sink.on("t.audit")
    values = [(f"t.audit[0]@{i}", m.value) for i, m in enumerate(audits)]
    assert audit.apply_values(values) == len({codec.loads(m.value)["event_id"] for m in audits})
    assert audit.stats.malformed == 0
    assert audit.apply_values(values) == 0
    pairs = {
        (e["run_id"], e["tool_call_id"])
        for e in map(codec.loads, (m.value for m in audits))
        if e["run_id"] and e["tool_call_id"]
    }
    assert audit.counts()["tool_calls"] == len(pairs) == len(ledger.entries)
    assert audit.counts()["verdicts"] == sum(codec.loads(m.value)["station"] == "guard" for m in audits)
    failed = [e for e in ledger.entries.values() if e["status"] == "FAILED"]
    assert failed
    for entry in failed:
        call = tool_call(audit, entry["run_id"], entry["tool_call_id"])
        assert call["postprocess_status"] == "FAILED"
        assert call["dead_letter_reason"] == entry["failure_reason"]
        assert call["ledger_status"] == "FAILED"


def test_a_record_sqlite_cannot_hold_is_counted_and_skipped_not_a_crash_loop(audit: AuditStore) -> None:
    """``"attempt": 18446744073709551615`` overflows SQLite's integers; the rest of the batch is stored."""
    huge = dict(guard("run-1", 5, 1, "PASS", []))
    huge["fields"] = {**huge["fields"], "attempt": 18446744073709551615}
    huge["event_id"] = "guard:huge"
    batch = [*chain("run-1", "call_a", 0), huge, guard("run-1", 6, 1, "PASS", [])]
    values = [(f"t.audit[0]@{i}", codec.dumps(r)) for i, r in enumerate(batch)]
    assert audit.apply_values(values) == 4
    assert audit.stats.malformed == 1
    assert "guard:huge" not in audit.event_ids()
    assert audit.apply_values(values) == 0  # the same batch again: nothing new, and no crash either


def test_a_recreated_topic_is_not_taken_for_a_replay(audit: AuditStore) -> None:
    """Same offsets after the topic was deleted and created again: the origin timestamp makes the
    event ids new, so the idempotent sink keeps both runs (and still drops a true repeat)."""
    before = chain("run-1", "call_a", 0)
    again = [
        dict(r, event_id=r["event_id"].replace(":1700000000000", ":1800000000000"))
        for r in chain("run-1", "call_a", 0)
    ]
    assert {r["event_id"] for r in before}.isdisjoint({r["event_id"] for r in again})
    assert audit.apply(before) == 3
    assert audit.apply(again) == 3
    assert audit.apply(before) == 0
