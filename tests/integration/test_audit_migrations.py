"""The audit schema's versioned migrations on SQLite and a real PostgreSQL: a fresh database gets every
version, a re-open applies nothing, a file from before versions existed is adopted as version 1,
sinks that start together apply each step once, a failed step changes nothing, a newer schema is refused."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from streams.audit.factory import open_store
from streams.audit.migrations import Migration
from streams.audit.migrations import postgres as pg_migrations
from streams.audit.migrations import sqlite as sqlite_migrations
from streams.audit.migrations.views import tool_invocation_sql
from streams.errors import AuditStoreBusy, ConfigurationError
from tests.streams.audit_records import chain, one_run

VERSIONS = [m.version for m in sqlite_migrations.MIGRATIONS]

# The schema exactly as the sink created it before migrations existed (streams/audit/store.py at
# d8db274), run by executescript on every open, with the view dropped and created again.
PRE_MIGRATION_SCHEMA = """
CREATE TABLE IF NOT EXISTS audit_events (
    event_id         TEXT PRIMARY KEY,
    run_id           TEXT,
    tool_call_id     TEXT,
    station          TEXT NOT NULL,
    origin_topic     TEXT,
    origin_partition INTEGER,
    origin_offset    INTEGER,
    source_topic     TEXT NOT NULL,
    source_partition INTEGER NOT NULL,
    source_offset    INTEGER NOT NULL,
    source_timestamp INTEGER,
    processed_at     TEXT NOT NULL,
    fields           TEXT NOT NULL,
    applied_at       TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_events_run ON audit_events (run_id);
CREATE TABLE IF NOT EXISTS tool_call_station (
    run_id           TEXT NOT NULL,
    tool_call_id     TEXT NOT NULL,
    station          TEXT NOT NULL,
    event_id         TEXT NOT NULL,
    origin_topic     TEXT,
    origin_partition INTEGER,
    origin_offset    INTEGER,
    source_timestamp INTEGER,
    tiebreak         INTEGER NOT NULL,
    processed_at     TEXT NOT NULL,
    fields           TEXT NOT NULL,
    applied_at       TEXT NOT NULL,
    PRIMARY KEY (run_id, tool_call_id, station)
);
CREATE TABLE IF NOT EXISTS guard_verdict (
    event_id            TEXT PRIMARY KEY,
    run_id              TEXT,
    draft_id            TEXT,
    attempt             INTEGER,
    verdict             TEXT,
    violation_codes     TEXT NOT NULL,
    cited_tool_call_ids TEXT NOT NULL,
    origin_topic        TEXT,
    origin_partition    INTEGER,
    origin_offset       INTEGER,
    source_timestamp    INTEGER,
    processed_at        TEXT NOT NULL,
    applied_at          TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS guard_verdict_run ON guard_verdict (run_id);
"""


def query(target: str, sql: str) -> list[tuple[Any, ...]]:
    """Rows of ``sql`` read straight from the database, past the store."""
    if target.startswith("postgresql://"):
        with psycopg.connect(target, autocommit=True) as conn:
            return [tuple(r) for r in conn.execute(sql.encode()).fetchall()]
    conn = sqlite3.connect(target)
    try:
        return [tuple(r) for r in conn.execute(sql).fetchall()]
    finally:
        conn.close()


def migrations_of(target: str) -> list[tuple[int, str]]:
    return [
        (int(v), str(n)) for v, n in query(target, "SELECT version, name FROM schema_migrations ORDER BY 1")
    ]


def test_both_backends_have_the_same_versions() -> None:
    assert [(m.version, m.name) for m in pg_migrations.MIGRATIONS] == [
        (m.version, m.name) for m in sqlite_migrations.MIGRATIONS
    ]
    assert VERSIONS == list(range(1, len(VERSIONS) + 1))


def test_a_fresh_database_gets_every_version_and_a_reopen_applies_nothing(target: str) -> None:
    store = open_store(target)
    try:
        assert store.versions == VERSIONS
        assert store.apply(one_run()) == 12
    finally:
        store.close()
    first = query(target, "SELECT version, name, applied_at FROM schema_migrations ORDER BY 1")
    assert [(int(v), n) for v, n, _ in first] == [(m.version, m.name) for m in sqlite_migrations.MIGRATIONS]
    assert query(target, "SELECT count(*) FROM run_summary") == [(1,)]

    again = open_store(target)
    try:
        assert again.versions == VERSIONS
        assert again.counts() == {"events": 12, "tool_calls": 3, "verdicts": 2}
    finally:
        again.close()
    # Nothing ran again: the same rows, with the times they were first applied.
    assert query(target, "SELECT version, name, applied_at FROM schema_migrations ORDER BY 1") == first


def test_a_file_from_before_migrations_is_adopted_as_version_1(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old = sqlite3.connect(path)
    old.executescript(PRE_MIGRATION_SCHEMA)
    old.execute("DROP VIEW IF EXISTS tool_invocation")
    old.execute(tool_invocation_sql("sqlite"))  # version 1's view is the old code's, unchanged
    # A tool call the old sink stored.
    old.execute(
        "INSERT INTO audit_events VALUES ('postprocess:old', 'run-old', 'call_old', 'postprocess', "
        "'t.raw-hits', 0, 7, 't.raw-hits', 0, 7, 1700000000007, '2024-05-01T12:00:00.000+00:00', "
        "'{\"candidate_count\":4}', '2024-05-01T12:00:01.000+00:00')"
    )
    old.execute(
        "INSERT INTO tool_call_station VALUES ('run-old', 'call_old', 'postprocess', 'postprocess:old', "
        "'t.raw-hits', 0, 7, 1700000000007, 0, '2024-05-01T12:00:00.000+00:00', '{\"candidate_count\":4}', "
        "'2024-05-01T12:00:01.000+00:00')"
    )
    old.commit()
    old.close()

    reader = open_store(path, readonly=True)  # a reader sees it as version 1 and migrates nothing
    try:
        assert reader.versions == [1]
        assert reader.run_trail("run-old")[0][0]["candidate_count"] == 4
        with pytest.raises(ConfigurationError, match="schema version 1.*audit-sink"):
            reader.run_overview()
    finally:
        reader.close()

    adopted = open_store(path)
    try:
        assert adopted.versions == VERSIONS
        assert adopted.event_ids() == {"postprocess:old"}  # the old rows are all there
        assert adopted.apply(chain("run-old", "call_new", 8)) == 3
        assert adopted.counts() == {"events": 4, "tool_calls": 2, "verdicts": 0}
        assert [r["run_id"] for r in adopted.run_overview()["runs"]] == ["run-old"]
    finally:
        adopted.close()
    (first, *rest) = migrations_of(str(path))
    assert first == (
        1,
        f"{sqlite_migrations.MIGRATIONS[0].name} (adopted: created before versioned migrations)",
    )
    assert [v for v, _ in rest] == VERSIONS[1:]


def test_a_file_with_only_some_audit_tables_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "half.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE audit_events (event_id TEXT PRIMARY KEY)")
    conn.commit()
    conn.close()
    with pytest.raises(ConfigurationError, match="holds the audit tables audit_events but not all"):
        open_store(path)


def test_a_schema_newer_than_this_code_is_refused(target: str) -> None:
    open_store(target).close()
    if target.startswith("postgresql://"):
        with psycopg.connect(target, autocommit=True) as conn:
            conn.execute("INSERT INTO schema_migrations (version, name) VALUES (99, 'from the future')")
    else:
        conn = sqlite3.connect(target)
        conn.execute("INSERT INTO schema_migrations VALUES (99, 'from the future', '2030-01-01')")
        conn.commit()
        conn.close()
    for readonly in (False, True):
        with pytest.raises(ConfigurationError, match="schema version 99, newer than"):
            open_store(target, readonly=readonly)


def test_a_failing_step_changes_nothing(target: str, monkeypatch: pytest.MonkeyPatch) -> None:
    open_store(target).close()
    broken = Migration(len(VERSIONS) + 1, "broken", ("CREATE TABLE half_done (x integer)", "NOT SQL AT ALL"))
    module = pg_migrations if target.startswith("postgresql://") else sqlite_migrations
    monkeypatch.setattr(module, "MIGRATIONS", (*module.MIGRATIONS, broken))
    with pytest.raises(ConfigurationError):
        open_store(target)
    assert [v for v, _ in migrations_of(target)] == VERSIONS
    tables = (
        "SELECT table_name FROM information_schema.tables WHERE table_name = 'half_done'"
        if target.startswith("postgresql://")
        else "SELECT name FROM sqlite_master WHERE name = 'half_done'"
    )
    assert query(target, tables) == []  # the step's first statement was rolled back with it


def test_sinks_that_start_together_apply_each_step_once(target: str) -> None:
    starters = 6
    barrier = threading.Barrier(starters)
    opened: list[list[int]] = []
    failures: list[BaseException] = []

    def start() -> None:
        barrier.wait()
        deadline = time.monotonic() + 30
        while True:
            try:
                store = open_store(target)
                break
            except AuditStoreBusy:  # SQLite: another starter holds the lock; the sink retries, so do we
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
            except BaseException as exc:  # noqa: BLE001 - collected and asserted below
                failures.append(exc)
                return
        opened.append(store.versions)
        store.close()

    threads = [threading.Thread(target=start) for _ in range(starters)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert failures == []
    assert opened == [VERSIONS] * starters
    assert [v for v, _ in migrations_of(target)] == VERSIONS


def _hold_migration_lock(target: str) -> tuple[Callable[[], None], Callable[[], None]]:
    """(take, release) of the lock a migrating sink takes, from a connection of the test's own."""
    if target.startswith("postgresql://"):
        conn = psycopg.connect(target, autocommit=True)

        def take() -> None:
            conn.execute("SELECT pg_advisory_lock(%s)", (pg_migrations.MIGRATION_LOCK,))

        def release() -> None:
            conn.execute("SELECT pg_advisory_unlock(%s)", (pg_migrations.MIGRATION_LOCK,))
            conn.close()

        return take, release
    lite = sqlite3.connect(target, isolation_level=None)

    def take_write_lock() -> None:
        lite.execute("PRAGMA journal_mode=WAL")  # as a starting sink does before it migrates
        lite.execute("BEGIN IMMEDIATE")

    def release_write_lock() -> None:
        lite.execute("COMMIT")
        lite.close()

    return take_write_lock, release_write_lock


def test_a_sink_waits_for_the_lock_of_one_that_is_migrating(target: str) -> None:
    take, release = _hold_migration_lock(target)
    take()
    done: list[list[int]] = []
    failures: list[BaseException] = []

    def start() -> None:
        try:
            store = open_store(target)
        except BaseException as exc:  # noqa: BLE001 - asserted below
            done.append([-1])
            failures.append(exc)
            return
        done.append(store.versions)
        store.close()

    thread = threading.Thread(target=start)
    thread.start()
    try:
        time.sleep(1.0)
        assert thread.is_alive() and done == []  # it waits: it read nothing before it had the lock
    finally:
        release()
    thread.join(30)
    assert failures == []
    assert done == [VERSIONS]


def test_a_file_locked_by_another_process_is_retriable_not_fatal(tmp_path: Path) -> None:
    """Some SQLite lock changes do not wait for busy_timeout: the sink must hold and retry, not exit."""
    path = tmp_path / "locked.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(AuditStoreBusy, match="locked by another process") as locked:
            open_store(path)
        assert locked.value.retriable
    finally:
        holder.execute("COMMIT")
        holder.close()
    store = open_store(path)  # once the lock is gone it opens and migrates
    try:
        assert store.versions == VERSIONS
    finally:
        store.close()
