"""The audit store keeps the evidence (schema versions 3 and 4), on SQLite and a real PostgreSQL: ledger
entries as stored (first of a key wins, signature kept), verdicts by event id (every attempt), drafts by
their hash, published reports by event id; a database at version 2 migrates with its rows kept; the sink
stores what the four topics carry."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess

import psycopg
import pytest

from models.vocab import Topic
from streams import codec
from streams.audit.evidence import TopicValue, applied_at, evidence_of
from streams.audit.factory import open_store, store_from_settings
from streams.audit.migrations import postgres as pg_migrations
from streams.audit.migrations import sqlite as sqlite_migrations
from streams.audit.sink import run_sink
from streams.settings import Settings
from streams.trust import TrustedKeys
from streams.web.pages.run_evidence import evidence_document
from tests.integration.audit_db import settings_fixture  # noqa: F401 - the settings fixture
from tests.integration.evidence_run import RUN, SignedRun, signed_run
from tests.integration.helpers import CLI, publish

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> SignedRun:
    return asyncio.run(signed_run(tmp_path_factory.mktemp("keys")))


def test_entries_verdicts_and_drafts_are_stored_as_the_topics_carried_them(
    target: str, run: SignedRun
) -> None:
    store = open_store(target)
    try:
        assert store.versions == [1, 2, 3, 4, 5]
        assert store.apply(run.audit, run.evidence()) == len(run.audit)
        assert store.evidence_counts() == {"entries": 4, "verdicts": 3, "drafts": 3, "reports": 2}
        # A re-delivered batch changes nothing.
        assert store.apply(run.audit, run.evidence()) == 0
        assert store.evidence_counts() == {"entries": 4, "verdicts": 3, "drafts": 3, "reports": 2}
    finally:
        store.close()

    reader = open_store(target, readonly=True)
    try:
        stored = reader.ledger_entries(RUN)
        assert [s.tool_call_id for s in stored] == ["call_gw", "call_cert", "call_db"]
        for s, value in zip(stored, run.ledger, strict=False):
            assert s.entry == codec.loads(value.value or b"")  # every field, as the topic carried it
            assert list(s.entry) == list(codec.loads(value.value or b""))  # in the same order
            assert s.entry["key_id"] == run.signer.key_id and len(s.entry["signature"]) == 128
            assert not s.later_differs
        trusted = TrustedKeys.from_hex(ledger=[run.signer.public_hex], guard=[run.signer.public_hex])
        assert all(trusted.verify_entry(s.entry) is None for s in stored)
        verdicts = reader.stored_verdicts(RUN)
        assert [v["draft_id"] for v in verdicts] == ["d-ok", "d-overclaim"]
        assert verdicts == [d for d in run.verdict_docs() if d["run_id"] == RUN]
        assert all(trusted.verify_verdict(v) is None for v in verdicts)
        assert reader.stored_verdicts(RUN, "d-ok") == verdicts[:1]
        drafts = reader.stored_drafts(RUN)
        assert {v["draft_sha256"] for v in verdicts} <= set(drafts)
        assert {bytes(d) for d in drafts.values()} == {
            d.value for d in run.drafts if codec.loads(d.value or b"")["run_id"] == RUN
        }
        # what was published: d-ok's PASS report (d-overclaim was rejected), exactly as the topic carried it
        reports = reader.stored_reports(RUN)
        assert [(r["draft_id"], r["verdict"]) for r in reports] == [("d-ok", "PASS")]
        assert reports[0]["verdict_event_id"] == verdicts[0]["event_id"]
        assert codec.dumps(reports[0]) == run.reports[0].value
        assert trusted.verify_report(reports[0]) is None
        assert reader.stored_reports(RUN, "d-overclaim") == []
        (fallback,) = reader.stored_reports("run-demo-2")
        assert (fallback["draft_id"], fallback["verdict"]) == ("d-borrowed", "FALLBACK")
    finally:
        reader.close()


def test_the_first_entry_of_a_key_wins_and_every_attempt_is_kept(target: str, run: SignedRun) -> None:
    store = open_store(target)
    try:
        store.apply([], run.evidence())
        first = codec.loads(run.ledger[0].value or b"")
        later = {**first, "projection_sha256": "0" * 64, "event_id": "ledger:later"}
        again = codec.loads(run.verdicts[0].value or b"")
        second = {**again, "event_id": "guard:attempt-2", "attempt": 2, "verdict": "REJECT"}
        batch = evidence_of(
            [
                TopicValue("t.ledger", 1, 99, codec.dumps(later)),
                TopicValue("t.ledger", 0, 0, run.ledger[0].value),
            ],
            [
                TopicValue("t.verdicts", 0, 50, codec.dumps(second)),
                TopicValue("t.verdicts", 0, 0, run.verdicts[0].value),  # re-delivered: stored once
            ],
            [
                TopicValue("t.diagnosis-drafts", 0, 9, b"not json"),
                TopicValue("t.diagnosis-drafts", 0, 8, b"{}" * 9),
            ],
            applied_at(),
            max_draft_bytes=16,
        )
        assert batch.skipped == 2  # neither draft is one the guard reads item by item
        store.apply([], batch)
        (gw, *_) = store.ledger_entries(RUN)
        assert gw.entry == first and gw.later_differs  # what the agent was shown is not overwritten
        assert [(v["draft_id"], v["attempt"]) for v in store.stored_verdicts(RUN, "d-ok")] == [
            ("d-ok", 1),
            ("d-ok", 2),
        ]
        assert store.evidence_counts() == {"entries": 4, "verdicts": 4, "drafts": 3, "reports": 2}
    finally:
        store.close()


_OLD_EVENT = (
    "INSERT INTO audit_events VALUES ('postprocess:old', 'run-old', 'call_old', 'postprocess', "
    "'t.raw-hits', 0, 7, 't.raw-hits', 0, 7, 1700000000007, '2024-05-01T12:00:00.000+00:00', "
    "'{\"candidate_count\":4}', '2024-05-01T12:00:01.000+00:00')"
)


def _at_version_2(target: str) -> None:
    """The schema of versions 1 and 2 as a sink of the previous release left it, with one event."""
    if target.startswith("postgresql://"):
        with psycopg.connect(target, autocommit=True) as conn:
            conn.execute(pg_migrations._CREATE_VERSIONS.encode())
            for step in pg_migrations.MIGRATIONS[:2]:
                for statement in step.statements:
                    conn.execute(statement.encode())
                conn.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)", (step.version, step.name)
                )
            conn.execute(_OLD_EVENT.encode())
        return
    conn = sqlite3.connect(target)
    conn.execute(sqlite_migrations._CREATE_VERSIONS)
    for step in sqlite_migrations.MIGRATIONS[:2]:
        for statement in step.statements:
            conn.execute(statement)
        conn.execute(
            "INSERT INTO schema_migrations VALUES (?, ?, '2026-01-01T00:00:00.000+00:00')",
            (step.version, step.name),
        )
    conn.execute(_OLD_EVENT)
    conn.commit()
    conn.close()


def test_a_database_at_version_2_migrates_and_keeps_its_rows(target: str, run: SignedRun) -> None:
    _at_version_2(target)
    reader = open_store(target, readonly=True)  # a reader migrates nothing, and reads no evidence
    try:
        assert reader.versions == [1, 2]
        assert reader.ledger_entries(RUN) == [] and reader.stored_verdicts(RUN) == []
        assert reader.stored_drafts(RUN) == {}
        assert reader.stored_reports(RUN) == []
        assert reader.evidence_counts() == {"entries": 0, "verdicts": 0, "drafts": 0, "reports": 0}
    finally:
        reader.close()
    store = open_store(target)
    try:
        assert store.versions == [1, 2, 3, 4, 5]
        assert store.event_ids() == {"postprocess:old"}  # the old rows are all there
        store.apply(run.audit, run.evidence())
        assert store.evidence_counts() == {"entries": 4, "verdicts": 3, "drafts": 3, "reports": 2}
    finally:
        store.close()


# --- the sink on the real broker ------------------------------------------------------------------------


async def test_the_sink_stores_the_ledger_verdicts_drafts_and_reports_topics(
    settings: Settings, run: SignedRun
) -> None:
    for topic, values in (
        (Topic.AUDIT, [codec.dumps(r) for r in run.audit]),
        (Topic.LEDGER, [v.value or b"" for v in run.ledger]),
        (Topic.VERDICTS, [v.value or b"" for v in run.verdicts]),
        (Topic.DIAGNOSIS_DRAFTS, [v.value or b"" for v in run.drafts]),
        (Topic.REPORTS, [v.value or b"" for v in run.reports]),
    ):
        await publish(settings.kafka_bootstrap, settings.topic(topic), values)
    stats = await run_sink(settings, once=True, handle_signals=False)
    assert stats.inserted == len(run.audit)
    assert stats.evidence == len(run.ledger) + len(run.verdicts) + len(run.drafts) + len(run.reports)
    assert stats.read == stats.inserted + stats.evidence
    # again, from the start (a new group): everything is read again, nothing is added
    again = await run_sink(
        settings.model_copy(update={"app_id": f"{settings.app_id}-again"}), once=True, handle_signals=False
    )
    assert again.inserted == 0
    store = store_from_settings(settings, readonly=True)
    try:
        assert store.evidence_counts() == {"entries": 4, "verdicts": 3, "drafts": 3, "reports": 2}
        assert [s.entry for s in store.ledger_entries(RUN)] == [
            codec.loads(v.value or b"") for v in run.ledger[:3]
        ]
        assert [codec.dumps(r) for r in store.stored_reports(RUN)] == [run.reports[0].value]
    finally:
        store.close()


async def test_inspect_shows_what_was_published_for_each_draft(settings: Settings, run: SignedRun) -> None:
    """``inspect`` (JSON and text) puts each draft beside the report its verdict published: d-ok's PASS
    report with its reviewed fields, nothing for d-overclaim's REJECT."""
    for topic, values in (
        (Topic.AUDIT, [codec.dumps(r) for r in run.audit]),
        (Topic.VERDICTS, [v.value or b"" for v in run.verdicts]),
        (Topic.REPORTS, [v.value or b"" for v in run.reports]),
    ):
        await publish(settings.kafka_bootstrap, settings.topic(topic), values)
    await run_sink(settings, once=True, handle_signals=False)
    env = {
        **os.environ,
        "EC_AUDIT_DB": settings.audit_db,
        "EC_AUDIT_DSN": settings.audit_dsn.get_secret_value() if settings.audit_dsn else "",
        "EC_REDIS_URL": "redis://127.0.0.1:1/0",  # nothing listens there: inspect says so and goes on
        "COLUMNS": "200",
    }

    def inspect(*extra: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(  # noqa: S603 - our own CLI
            [CLI, "inspect", RUN, *extra], env=env, capture_output=True, timeout=60, check=False
        )

    shown, table = await asyncio.gather(asyncio.to_thread(inspect, "--json"), asyncio.to_thread(inspect))
    assert shown.returncode == 0, shown.stderr.decode()
    drafts = {d["draft_id"]: d for d in codec.loads(shown.stdout)["drafts"]}
    assert drafts["d-overclaim"]["report"] is None
    published = drafts["d-ok"]["report"]
    assert codec.dumps(published) == run.reports[0].value
    assert published["verdict_event_id"] == drafts["d-ok"]["event_id"]
    assert published["report"]["conclusion"]["content"] == "上游响应慢于 proxy_read_timeout"
    assert table.returncode == 0, table.stderr.decode()
    text = table.stdout.decode()
    assert "published (reports)" in text
    assert "2 analysis items, a conclusion, 1 action" in text and "nothing published" in text
    assert "上游响应慢于 proxy_read_timeout" in text


def test_the_run_pages_document_carries_each_drafts_report(target: str, run: SignedRun) -> None:
    """The run page's data (``evidence_document``): each draft attempt's view has ``report``, the event
    published for its verdict, or None — the pages render it from there."""
    store = open_store(target)
    try:
        store.apply(run.audit, run.evidence())
        tool_calls, guard_rows = store.run_trail(RUN)
        verdicts = store.stored_verdicts(RUN)
        doc = evidence_document(
            tool_calls,
            guard_rows,
            store.ledger_entries(RUN),
            store.station_records(RUN),
            verdicts,
            store.stored_drafts(RUN),
            None,
            1000,
            reports=store.stored_reports(RUN),
        )
    finally:
        store.close()
    by_draft = {v["draft_id"]: doc["drafts"][v["event_id"]] for v in verdicts}
    assert by_draft["d-overclaim"]["report"] is None
    assert codec.dumps(by_draft["d-ok"]["report"]) == run.reports[0].value
