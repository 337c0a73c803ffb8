"""The audit schema's versions for SQLite, and :func:`migrate`, which brings a file up to date.

Version 1 is the schema the sink wrote before versions existed; such a file (the three tables, no
``schema_migrations``) is adopted as version 1 without running anything, then migrated on.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

from streams.audit.migrations import Migration, pending, steps
from streams.errors import ConfigurationError

_V1_TABLES = ("audit_events", "tool_call_station", "guard_verdict")

MIGRATIONS: tuple[Migration, ...] = steps("sqlite")

_CREATE_VERSIONS = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TEXT NOT NULL
)
"""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def versions(conn: sqlite3.Connection) -> list[int]:
    """The versions a database has: from ``schema_migrations``, ``[1]`` for a file from before versions
    existed, ``[]`` for one without audit tables."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "schema_migrations" in tables:
        return sorted(row[0] for row in conn.execute("SELECT version FROM schema_migrations"))
    return [1] if set(_V1_TABLES) <= tables else []


def _adopt(conn: sqlite3.Connection, where: str) -> set[int]:
    """``{1}`` after recording a file from before versions existed as version 1; ``set()`` for a new one.

    Raises:
        ConfigurationError: the file has some of the audit tables but not all.
    """
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    present = [t for t in _V1_TABLES if t in tables]
    if not present:
        return set()
    if len(present) < len(_V1_TABLES):
        raise ConfigurationError(
            f"{where} holds the audit tables {', '.join(present)} but not all of "
            f"{', '.join(_V1_TABLES)}; it is not an audit database this code can migrate: point "
            "EC_AUDIT_DB (or --db) at another file"
        )
    # Written by the sink before versions existed: that schema is version 1.
    conn.execute(
        "INSERT INTO schema_migrations (version, name, applied_at) VALUES (1, ?, ?)",
        (f"{MIGRATIONS[0].name} (adopted: created before versioned migrations)", _now()),
    )
    return {1}


def migrate(conn: sqlite3.Connection, where: str) -> list[int]:
    """Apply the missing versions to ``conn`` (autocommit mode) in one transaction; returns those applied.

    ``BEGIN IMMEDIATE`` takes the database's write lock before anything is read, so a second sink
    starting at the same moment waits (``busy_timeout``) and then finds nothing left to do.

    Raises:
        ConfigurationError: the file has only some of the audit tables, or a version newer than this code.
        sqlite3.Error: the file cannot be written (the caller explains it).
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(_CREATE_VERSIONS)
        applied = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")} or _adopt(
            conn, where
        )
        done = []
        for step in pending(MIGRATIONS, applied, where):
            for statement in step.statements:
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                (step.version, step.name, _now()),
            )
            done.append(step.version)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return done
