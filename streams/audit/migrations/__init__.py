"""The versioned schema of the audit database: one ordered list of migrations per backend.

A database records the versions it has in ``schema_migrations(version, name, applied_at)``. When the
sink opens it, the missing steps are applied in order, each with its ``schema_migrations`` row, in one
transaction under a lock (SQLite: ``BEGIN IMMEDIATE``, the database's write lock; PostgreSQL: a
transaction-level advisory lock), so two sinks that start together apply every step exactly once and a
failed step leaves the database as it was. Readers (``inspect``, ``serve``) never migrate.

:func:`steps` is the one list of versions; each is rendered in either dialect from the tables of
:mod:`streams.audit.tables` and the views of :mod:`streams.audit.migrations.views`, so the two backends
always have the same versions, tables and views.

- :mod:`streams.audit.migrations.sqlite` — ``MIGRATIONS`` for SQLite and how a file is brought up to
  date; a file written before versions existed (the three tables, no ``schema_migrations``) is adopted
  as version 1.
- :mod:`streams.audit.migrations.postgres` — ``MIGRATIONS`` for PostgreSQL, under an advisory lock.

Adding a step: append a :class:`Migration` with the next version to :func:`steps`. Never edit a step
that has been released: databases out there already ran it (``tests/data/audit-schema/`` holds each
released step's statements, and ``tests/streams/test_audit_schema.py`` the code to them).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from streams.audit.migrations.views import RUN_SUMMARY_SQL, tool_invocation_sql
from streams.audit.tables import (
    AUDIT_EVENTS,
    DRAFT_RECORD,
    GUARD_VERDICT,
    JUDGEMENT_RECORD,
    LEDGER_ENTRY,
    REPORT_RECORD,
    TOOL_CALL_STATION,
    VERDICT_RECORD,
    Dialect,
    create_index,
    create_table,
)
from streams.errors import ConfigurationError


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema step: its version, a name for people, and its statements (one SQL statement each)."""

    version: int
    name: str
    statements: tuple[str, ...]


def steps(dialect: Dialect) -> tuple[Migration, ...]:
    """Every version of the audit schema, in order, in ``dialect``."""
    return (
        Migration(
            1,
            "audit tables and the tool_invocation view",
            (
                create_table(AUDIT_EVENTS, dialect),
                create_index(AUDIT_EVENTS, "run", "run_id"),
                create_table(TOOL_CALL_STATION, dialect),
                create_table(GUARD_VERDICT, dialect),
                create_index(GUARD_VERDICT, "run", "run_id"),
                tool_invocation_sql(dialect),
            ),
        ),
        Migration(2, "run_summary view", (RUN_SUMMARY_SQL,)),
        Migration(
            3,
            "ledger entries, verdicts and drafts as the topics carried them",
            (
                create_table(LEDGER_ENTRY, dialect),
                create_table(VERDICT_RECORD, dialect),
                create_index(VERDICT_RECORD, "run", "run_id", "draft_id"),
                create_table(DRAFT_RECORD, dialect),
                create_index(DRAFT_RECORD, "run", "run_id"),
            ),
        ),
        Migration(
            4,
            "published reports as the reports topic carried them",
            (create_table(REPORT_RECORD, dialect), create_index(REPORT_RECORD, "run", "run_id", "draft_id")),
        ),
        Migration(
            5,
            "the semantic review's judgements as the judgements topic carried them",
            (
                create_table(JUDGEMENT_RECORD, dialect),
                create_index(JUDGEMENT_RECORD, "run", "run_id", "draft_id"),
            ),
        ),
    )


def pending(migrations: Sequence[Migration], applied: Collection[int], where: str) -> list[Migration]:
    """The steps of ``migrations`` not in ``applied``, in version order.

    Raises:
        ConfigurationError: the database has a version this code does not know (a newer release wrote it).
    """
    known = {m.version for m in migrations}
    unknown = sorted(set(applied) - known)
    if unknown:
        raise ConfigurationError(
            f"the audit database {where} has schema version {unknown[-1]}, newer than this evidence-chain "
            f"knows (up to {max(known)}); run a release that knows it, or point the sink at another database"
        )
    return sorted((m for m in migrations if m.version not in applied), key=lambda m: m.version)


def latest(migrations: Sequence[Migration]) -> int:
    """The highest version of ``migrations``."""
    return max(m.version for m in migrations)
