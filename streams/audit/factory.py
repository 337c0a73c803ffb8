"""Which audit store a target names: the factory lives outside the base class it builds, so the
interface (``store``) imports neither backend and no backend imports it back in a circle.

The PostgreSQL backend is imported only when a DSN asks for it: psycopg is an optional extra
(``evidence-chain[postgres]``), and a plain install must run every command that never opens one."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from streams.audit.sqlite import SqliteAuditStore
from streams.audit.store import AuditStore, is_dsn, target_of

if TYPE_CHECKING:
    from streams.settings import Settings


def open_store(target: str | Path, *, readonly: bool = False) -> AuditStore:
    """Open the audit database ``target``: a SQLite path, or a PostgreSQL DSN.

    For writing it is created if need be and migrated to the latest schema; a reader migrates nothing.

    Raises:
        ConfigurationError: the database cannot be used as it is (the message says what to change).
        AuditStoreBusy: a PostgreSQL server cannot be reached now (retriable).
    """
    if is_dsn(target):
        from streams.audit.postgres import PostgresAuditStore

        return PostgresAuditStore.connect(str(target), readonly=readonly)
    return SqliteAuditStore.connect(target, readonly=readonly)


def require_backend(target: str | Path) -> None:
    """Check, before a long-running command starts anything, that ``target``'s backend is installed.

    Raises:
        ConfigurationError: a PostgreSQL DSN without psycopg (the message names the extra to install).
    """
    if is_dsn(target):
        import streams.audit.postgres  # noqa: F401 - its import raises ConfigurationError without psycopg


def store_from_settings(settings: Settings, *, readonly: bool = False) -> AuditStore:
    """The database of ``EC_AUDIT_DSN`` when it is set, else the SQLite file ``EC_AUDIT_DB``.

    Raises:
        ConfigurationError: the database cannot be used as it is.
        AuditStoreBusy: a PostgreSQL server cannot be reached now (retriable).
    """
    return open_store(target_of(settings), readonly=readonly)
