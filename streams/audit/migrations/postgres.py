"""The audit schema's versions for PostgreSQL, and :func:`migrate`, which brings a database up to date.

The same tables and views as SQLite, in PostgreSQL's types: 64-bit integers (``bigint``, the range
SQLite holds), ``jsonb`` for a record's fields and id lists, ``timestamptz`` for when a row was
stored. They live in the connection's current schema (``public`` unless the DSN's ``options`` set a
``search_path``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from streams.audit.migrations import Migration, pending
from streams.audit.migrations.evidence import EVIDENCE_NAME, REPORTS_NAME, evidence_tables, report_tables
from streams.audit.migrations.views import RUN_SUMMARY_SQL, tool_invocation_sql

if TYPE_CHECKING:
    import psycopg

MIGRATION_LOCK = int.from_bytes(b"ec-audit", "big")
"""The advisory lock key every sink takes while it migrates (``pg_advisory_xact_lock``)."""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "audit tables and the tool_invocation view",
        (
            """CREATE TABLE audit_events (
                event_id         text PRIMARY KEY,
                run_id           text,
                tool_call_id     text,
                station          text NOT NULL,
                origin_topic     text,
                origin_partition bigint,
                origin_offset    bigint,
                source_topic     text NOT NULL,
                source_partition bigint NOT NULL,
                source_offset    bigint NOT NULL,
                source_timestamp bigint,
                processed_at     text NOT NULL,
                fields           jsonb NOT NULL,
                applied_at       timestamptz NOT NULL
            )""",
            "CREATE INDEX audit_events_run ON audit_events (run_id)",
            """CREATE TABLE tool_call_station (
                run_id           text NOT NULL,
                tool_call_id     text NOT NULL,
                station          text NOT NULL,
                event_id         text NOT NULL,
                origin_topic     text,
                origin_partition bigint,
                origin_offset    bigint,
                source_timestamp bigint,
                tiebreak         integer NOT NULL,
                processed_at     text NOT NULL,
                fields           jsonb NOT NULL,
                applied_at       timestamptz NOT NULL,
                PRIMARY KEY (run_id, tool_call_id, station)
            )""",
            """CREATE TABLE guard_verdict (
                event_id            text PRIMARY KEY,
                run_id              text,
                draft_id            text,
                attempt             bigint,
                verdict             text,
                violation_codes     jsonb NOT NULL,
                cited_tool_call_ids jsonb NOT NULL,
                origin_topic        text,
                origin_partition    bigint,
                origin_offset       bigint,
                source_timestamp    bigint,
                processed_at        text NOT NULL,
                applied_at          timestamptz NOT NULL
            )""",
            "CREATE INDEX guard_verdict_run ON guard_verdict (run_id)",
            tool_invocation_sql("postgresql"),
        ),
    ),
    Migration(2, "run_summary view", (RUN_SUMMARY_SQL,)),
    Migration(3, EVIDENCE_NAME, evidence_tables("postgresql")),
    Migration(4, REPORTS_NAME, report_tables("postgresql")),
)

_CREATE_VERSIONS = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)
"""


def versions(conn: psycopg.Connection[tuple[object, ...]]) -> list[int]:
    """The versions a database has (``[]`` when it has no ``schema_migrations`` table)."""
    found = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").fetchone()
    if not found or not found[0]:
        return []
    return sorted(int(str(row[0])) for row in conn.execute("SELECT version FROM schema_migrations"))


def migrate(conn: psycopg.Connection[tuple[object, ...]], where: str) -> list[int]:
    """Apply the missing versions in one transaction, under the advisory lock; returns those applied.

    The lock is taken before anything is read (even before ``schema_migrations`` is created, which is
    not safe to race), so a second sink waits for the first to commit and then finds nothing to do.

    Raises:
        ConfigurationError: the database has a version newer than this code.
        psycopg.Error: a statement failed; nothing was changed (the caller explains it).
    """
    done: list[int] = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        conn.execute(_CREATE_VERSIONS)
        applied = {int(str(row[0])) for row in conn.execute("SELECT version FROM schema_migrations")}
        for step in pending(MIGRATIONS, applied, where):
            for statement in step.statements:
                conn.execute(statement.encode())
            conn.execute(
                "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)", (step.version, step.name)
            )
            done.append(step.version)
    return done
