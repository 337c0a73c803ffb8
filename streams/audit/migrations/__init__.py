"""The versioned schema of the audit database: one ordered list of migrations per backend.

A database records the versions it has in ``schema_migrations(version, name, applied_at)``. When the
sink opens it, the missing steps are applied in order, each with its ``schema_migrations`` row, in one
transaction under a lock (SQLite: ``BEGIN IMMEDIATE``, the database's write lock; PostgreSQL: a
transaction-level advisory lock), so two sinks that start together apply every step exactly once and a
failed step leaves the database as it was. Readers (``inspect``, ``serve``) never migrate.

- :mod:`streams.audit.migrations.sqlite` — ``MIGRATIONS`` for SQLite; a file written before versions
  existed (the three tables, no ``schema_migrations``) is adopted as version 1.
- :mod:`streams.audit.migrations.postgres` — the same versions for PostgreSQL.
- :mod:`streams.audit.migrations.views` — the SQL of the ``tool_invocation`` and ``run_summary`` views
  in both dialects.

Adding a step: append a :class:`Migration` with the next version to *both* lists (the two backends
always have the same versions, see ``tests/integration/test_audit_store.py``). Never edit a step
that has been released: databases out there already ran it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from streams.errors import ConfigurationError


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema step: its version, a name for people, and its statements (one SQL statement each)."""

    version: int
    name: str
    statements: tuple[str, ...]


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
