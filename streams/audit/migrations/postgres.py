"""The audit schema's versions for PostgreSQL, and :func:`migrate`, which brings a database up to date.

The same tables and views as SQLite, in PostgreSQL's types: 64-bit integers (``bigint``, the range
SQLite holds), ``jsonb`` for a record's fields and id lists, ``timestamptz`` for when a row was
stored. They live in the connection's current schema (``public`` unless the DSN's ``options`` set a
``search_path``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from streams.audit.migrations import Migration, pending, steps

if TYPE_CHECKING:
    import psycopg

MIGRATION_LOCK = int.from_bytes(b"ec-audit", "big")
"""The advisory lock key every sink takes while it migrates (``pg_advisory_xact_lock``)."""

MIGRATIONS: tuple[Migration, ...] = steps("postgresql")

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
