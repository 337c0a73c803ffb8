"""The audit store's rules on both backends, SQLite and a real PostgreSQL: dedupe by event_id, "latest"
by origin order, verdict rows, records neither can hold, and the same rows read back from either.

(``tests/streams/test_audit_sink.py`` holds the SQLite-only checks; these run the rules on both.)
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from pydantic import SecretStr

from models.vocab import Station
from streams import codec
from streams.audit.factory import open_store, store_from_settings
from streams.audit.store import AuditStore, describe
from streams.errors import AuditStoreBusy, ConfigurationError
from streams.settings import Settings, load_settings
from tests.integration.audit_db import fresh_database
from tests.streams.audit_records import chain, dead_letter, guard, one_run, tool_call
from tests.streams.conftest import golden_lines, handle, records, run_chain


@pytest.fixture
def audit(target: str) -> Iterator[AuditStore]:
    store = open_store(target)
    yield store
    store.close()


def test_rows_equal_distinct_events_and_a_replay_adds_none(audit: AuditStore) -> None:
    batch = one_run()
    assert audit.apply(batch) == len(batch) == 12
    assert audit.counts() == {"events": 12, "tool_calls": 3, "verdicts": 2}
    replay = [*chain("run-1", "call_a", 0, outcome="DUPLICATE"), *batch, *batch]
    assert audit.apply(replay) == 0
    assert audit.counts() == {"events": 12, "tool_calls": 3, "verdicts": 2}
    assert audit.stats.replays == len(replay)
    assert tool_call(audit, "run-1", "call_a")["ledger_outcome"] == "WRITTEN"


def test_duplicates_within_one_batch_count_once(audit: AuditStore) -> None:
    batch = chain("run-1", "call_a", 0)
    assert audit.apply(batch + batch + batch) == 3
    assert audit.counts()["events"] == 3


def test_latest_is_the_origin_order_never_the_arrival_order(audit: AuditStore) -> None:
    audit.apply(chain("run-1", "call_a", 10, candidates=7, outcome="DUPLICATE"))
    audit.apply(chain("run-1", "call_a", 3, candidates=2, outcome="WRITTEN"))  # older, arrives later
    call = tool_call(audit, "run-1", "call_a")
    assert (call["candidate_count"], call["ledger_outcome"], call["origin_offset"]) == (7, "DUPLICATE", 10)
    audit.apply(chain("run-1", "call_a", 12, candidates=9))
    assert tool_call(audit, "run-1", "call_a")["candidate_count"] == 9
    # Across partitions the origin timestamp decides.
    audit.apply(chain("run-1", "call_b", 50, partition=1, candidates=5))
    audit.apply(chain("run-1", "call_b", 20, partition=2, candidates=4))
    assert tool_call(audit, "run-1", "call_b")["candidate_count"] == 5
    # Dead letters of one origin: the later station of the chain wins, whichever arrives first.
    later = dead_letter("run-1", "call_c", 4, Station.LEDGER, "LEDGER_CONFLICT")
    earlier = dead_letter("run-1", "call_c", 4, Station.POSTPROCESS, "SCHEMA_VIOLATION")
    audit.apply([later, earlier])
    assert tool_call(audit, "run-1", "call_c")["dead_letter_reason"] == "LEDGER_CONFLICT"


def test_without_an_origin_order_the_record_applied_later_wins(audit: AuditStore) -> None:
    first, second = (chain("run-1", "call_a", n, candidates=n)[0] for n in (5, 2))
    for record in (first, second):
        record["origin"] = None
        record["source_timestamp"] = None
    audit.apply([first])
    audit.apply([second])
    assert tool_call(audit, "run-1", "call_a")["candidate_count"] == 2


def test_one_verdict_row_per_guard_audit(audit: AuditStore) -> None:
    audit.apply(one_run())
    audit.apply([guard("run-1", 0, 1, "REJECT", ["CITATION_NOT_FOUND"])])  # a re-delivered draft
    _, verdicts = audit.run_trail("run-1")
    assert [(v["attempt"], v["verdict"], v["violation_codes"]) for v in verdicts] == [
        (1, "REJECT", ["CITATION_NOT_FOUND", "LIMITATIONS_MISSING"]),
        (2, "PASS", []),
    ]
    assert verdicts[0]["cited_tool_call_ids"] == ["call_a", "call_b"]


def test_a_value_neither_database_can_hold_is_skipped_and_the_batch_stored(audit: AuditStore) -> None:
    """An integer beyond 64 bits (SQLite's range and PostgreSQL's bigint): counted, skipped, no crash loop."""
    huge = dict(guard("run-1", 5, 1, "PASS", []))
    huge["fields"] = {**huge["fields"], "attempt": 18446744073709551615}
    huge["event_id"] = "guard:huge"
    offset = dict(chain("run-1", "call_z", 7)[0], event_id="postprocess:huge")
    offset["source"] = {**offset["source"], "offset": 2**63}
    batch = [*chain("run-1", "call_a", 0), huge, offset, guard("run-1", 6, 1, "PASS", [])]
    values = [(f"t.audit[0]@{i}", codec.dumps(r)) for i, r in enumerate(batch)]
    assert audit.apply_values(values) == 4
    assert audit.stats.malformed == 2
    assert {"guard:huge", "postprocess:huge"}.isdisjoint(audit.event_ids())
    assert audit.apply_values(values) == 0


def test_nul_characters_are_stored_not_lost(audit: AuditStore) -> None:
    """PostgreSQL text cannot hold NUL: it keeps the record with U+FFFD; SQLite keeps the NUL."""
    record = guard("run-1", 3, 1, "PASS", [])
    record["fields"] = {**record["fields"], "draft_id": "d\x00x", "note\x00": ["a\x00"]}
    assert audit.apply([record]) == 1
    (verdict,) = audit.run_trail("run-1")[1]
    assert verdict["draft_id"] == ("d\x00x" if audit.backend == "sqlite" else "d\ufffdx")


def test_a_reader_never_writes(audit: AuditStore, target: str) -> None:
    audit.apply(one_run())
    reader = open_store(target, readonly=True)
    try:
        assert reader.counts() == audit.counts()
        with pytest.raises(ConfigurationError, match="read-only"):
            reader.apply(chain("run-2", "call_a", 0))
    finally:
        reader.close()
    assert audit.counts()["events"] == 12


def test_the_run_overview_counts_by_run_newest_first(audit: AuditStore) -> None:
    audit.apply(one_run())  # run-1: origins at 1_700_000_000_000 + 0..2 and drafts at ...100_000 + 0..1
    audit.apply([*chain("run-2", "call_a", 900), guard("run-2", 900, 2, "FALLBACK", ["ANALYSIS_EMPTY"])])
    orphan = guard("run-x", 901, 1, "REJECT", ["DRAFT_UNPARSABLE"])
    orphan["run_id"] = None
    audit.apply([orphan])
    overview = audit.run_overview()
    assert [r["run_id"] for r in overview["runs"]] == ["run-2", "run-1"]
    run1 = overview["runs"][1]
    assert (run1["tool_calls"], run1["dead_letters"], run1["verdicts"]) == (
        3,
        1,
        {"PASS": 1, "REJECT": 1, "FALLBACK": 0},
    )
    assert overview["runs"][0]["verdicts"] == {"PASS": 0, "REJECT": 0, "FALLBACK": 1}
    assert (overview["run_count"], overview["verdicts_without_run_id"]) == (2, 1)
    assert [r["run_id"] for r in audit.run_overview(limit=1)["runs"]] == ["run-2"]


async def test_both_backends_read_back_the_same_trail_of_the_real_processors(
    tmp_path: Path, postgres_admin: str, settings: Settings
) -> None:
    """Golden raw-hits and drafts through the real stations, into SQLite and PostgreSQL: same rows."""
    sink, ledger = await run_chain(settings, golden_lines("pipe", "input.jsonl"))
    drafts = golden_lines("guard", "drafts.jsonl")
    await handle(Station.GUARD, settings, sink, records("t.diagnosis-drafts", drafts), ledger)
    values = [(f"t.audit[0]@{i}", m.value) for i, m in enumerate(sink.on("t.audit"))]
    runs = {codec.loads(v)["run_id"] for _, v in values} - {None}

    def everything(store: AuditStore) -> dict[str, Any]:
        assert store.apply_values(values) == len({codec.loads(v)["event_id"] for _, v in values})
        trails = {run: store.run_trail(run) for run in sorted(runs)}
        for calls, verdicts in trails.values():
            for row in [*calls, *verdicts]:
                row.pop("updated_at")  # when it was stored, the one value that differs
        overview = store.run_overview()
        for run in overview["runs"]:
            run.pop("last_applied_at")
        return {"counts": store.counts(), "trails": trails, "overview": overview}

    with fresh_database(postgres_admin) as dsn:
        sqlite, postgres = open_store(tmp_path / "audit.db"), open_store(dsn)
        try:
            assert everything(sqlite) == everything(postgres)
            assert sqlite.counts()["verdicts"] == len(drafts)
        finally:
            sqlite.close()
            postgres.close()


@pytest.fixture
def settings() -> Settings:
    return Settings(topic_prefix="t.", retry_initial_backoff_ms=1, retry_max_backoff_ms=5)


def _with_password(dsn: str, password: str) -> str:
    parts = urlsplit(dsn)
    netloc = f"{parts.username}:{password}@{parts.hostname}:{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def test_the_dsn_is_a_secret_and_must_name_postgresql(postgres_admin: str) -> None:
    secret = "hunter2-not-printed"
    settings = load_settings(audit_dsn=f"postgresql://ec:{secret}@127.0.0.1:1/audit")
    assert secret not in repr(settings) and secret not in describe(settings)
    assert describe(settings) == "postgresql://****@127.0.0.1:1/audit"
    with pytest.raises(ConfigurationError, match="EC_AUDIT_DSN: .*postgresql://") as refused:
        load_settings(audit_dsn=f"mysql://ec:{secret}@db/audit")
    assert secret not in str(refused.value)
    assert load_settings(audit_dsn="").audit_dsn is None  # empty: SQLite, as if unset

    # Nobody listens on port 1: retriable, the sink waits for the server.
    with pytest.raises(AuditStoreBusy) as unreachable:
        store_from_settings(settings)
    assert unreachable.value.retriable and secret not in str(unreachable.value)
    # A wrong password is not retriable, and the message says what to check without printing it.
    with pytest.raises(ConfigurationError, match="check EC_AUDIT_DSN") as rejected:
        open_store(_with_password(postgres_admin, secret))
    assert secret not in str(rejected.value) and "****" in str(rejected.value)


def test_settings_choose_the_backend(target: str, tmp_path: Path) -> None:
    postgres = target.startswith("postgresql://")
    settings = Settings(
        audit_db=str(tmp_path / "unused.db") if postgres else target,
        audit_dsn=SecretStr(target) if postgres else None,
    )
    store = store_from_settings(settings)
    try:
        assert store.backend == ("postgresql" if postgres else "sqlite")
        assert store.apply(one_run()) == 12
    finally:
        store.close()
    assert not (tmp_path / "unused.db").exists()  # with a DSN, no SQLite file appears
