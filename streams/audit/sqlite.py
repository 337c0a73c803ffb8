"""The audit store in one SQLite file (``EC_AUDIT_DB``), the default backend of :class:`AuditStore`.

WAL mode, so ``inspect`` and ``serve`` read while the sink writes; ``synchronous=FULL``, so a committed
batch survives power loss before its Kafka offsets are committed.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

from streams.audit.evidence import Evidence
from streams.audit.migrations import pending
from streams.audit.migrations import sqlite as migrations
from streams.audit.store import AuditStore, EventRow, SummaryRow, TrailRow, skipped
from streams.audit.tables import (
    AUDIT_EVENTS,
    DRAFT_RECORD,
    GUARD_VERDICT,
    JUDGEMENT_RECORD,
    REPORT_RECORD,
    VERDICT_RECORD,
    insert_entry,
    insert_once,
    upsert_station,
)
from streams.errors import AuditStoreBusy, ConfigurationError

log = logging.getLogger(__name__)

_INSERT_EVENT = insert_once(AUDIT_EVENTS, "sqlite")
_INSERT_VERDICT = insert_once(GUARD_VERDICT, "sqlite")
_UPSERT_STATION = upsert_station("sqlite")  # only a strictly newer record replaces a station's row
_INSERT_ENTRY = insert_entry("sqlite")  # the first entry of a key wins; a later different one is flagged
_INSERT_VERDICT_RECORD = insert_once(VERDICT_RECORD, "sqlite")
_INSERT_REPORT_RECORD = insert_once(REPORT_RECORD, "sqlite")
_INSERT_JUDGEMENT_RECORD = insert_once(JUDGEMENT_RECORD, "sqlite")
_INSERT_DRAFT = insert_once(DRAFT_RECORD, "sqlite")

_UNSTORABLE = (
    OverflowError,
    ValueError,
    TypeError,
    sqlite3.IntegrityError,
    sqlite3.InterfaceError,
    sqlite3.DataError,
)
"""What one record can still raise that no retry will cure (the rows are checked before, this is the net)."""


def _unusable(where: str, exc: sqlite3.Error) -> ConfigurationError:
    return ConfigurationError(
        f"cannot use {where} as the audit database ({exc}); set EC_AUDIT_DB (or --db) to a "
        "writable SQLite file"
    )


@contextmanager
def _errors(
    busy: str,
    otherwise: Callable[[sqlite3.Error], ConfigurationError] | None = None,
    *,
    writing: bool = False,
) -> Iterator[None]:
    """SQLite's errors as this project's, mapped here once (like ``streams.audit.postgres._errors``).

    A lock another connection holds ("database is locked", "... busy": some lock changes do not wait
    for ``busy_timeout``) becomes :class:`AuditStoreBusy` ``"{busy}: {exc}"``, and so does any
    operational failure while ``writing`` a batch (a full or failing disk: nothing was stored). Any
    other SQLite error becomes ``otherwise(exc)``, or propagates as it is when there is none.

    Raises:
        AuditStoreBusy: retriable; the caller holds and tries again.
        ConfigurationError: from ``otherwise``.
    """
    try:
        yield
    except sqlite3.Error as exc:
        if isinstance(exc, sqlite3.OperationalError) and (
            writing or "locked" in str(exc) or "busy" in str(exc)
        ):
            raise AuditStoreBusy(f"{busy}: {exc}") from exc
        if otherwise is None:
            raise
        raise otherwise(exc) from exc


class SqliteAuditStore(AuditStore):
    """The audit tables in one SQLite file; one writer (the sink), any number of readers."""

    backend = "sqlite"

    def __init__(
        self, conn: sqlite3.Connection, path: str, *, readonly: bool, versions: Sequence[int]
    ) -> None:
        super().__init__(path, readonly=readonly, versions=versions)
        self.conn = conn
        self.path = path

    @classmethod
    def connect(cls, path: str | Path, *, readonly: bool = False) -> SqliteAuditStore:
        """Open (and, for writing, create and migrate) the audit database at ``path``.

        Raises:
            ConfigurationError: the file cannot be opened, is not an SQLite database, or has a schema
                this code cannot use.
            AuditStoreBusy: another process holds the file's write lock (retriable).
        """
        where = str(path)
        busy = f"the audit database {where} is locked by another process"
        with _errors(busy, lambda exc: _unusable(where, exc)):
            if readonly:
                if not Path(where).is_file():
                    raise ConfigurationError(f"no audit database at {where}; run `evidence-chain audit-sink`")
                conn = sqlite3.connect(f"{Path(where).resolve().as_uri()}?mode=ro", uri=True)
                conn.execute("PRAGMA busy_timeout=5000")
                versions = migrations.versions(conn)
                if not versions:
                    conn.close()
                    raise ConfigurationError(
                        f"{where} holds no audit tables yet; is it the file that "
                        "`evidence-chain audit-sink` writes?"
                    )
                pending(migrations.MIGRATIONS, versions, where)  # refuses a newer schema
            else:
                # The sink applies batches in a worker thread (asyncio.to_thread), one at a time.
                conn = sqlite3.connect(where, isolation_level=None, check_same_thread=False)
                conn.execute("PRAGMA busy_timeout=5000")
                conn.execute("PRAGMA journal_mode=WAL")
                # FULL: a committed batch survives power loss before its Kafka offsets are committed.
                conn.execute("PRAGMA synchronous=FULL")
                applied = migrations.migrate(conn, where)
                if applied:
                    log.info("audit database %s: applied schema versions %s", where, applied)
                versions = migrations.versions(conn)
        conn.row_factory = sqlite3.Row
        return cls(conn, where, readonly=readonly, versions=versions)

    def close(self) -> None:
        """Close the connection (a WAL checkpoint happens on the last close)."""
        self.conn.close()

    def _write(self, rows: Sequence[EventRow], evidence: Evidence | None) -> tuple[int, int]:
        inserted = unstorable = 0
        cur = self.conn.cursor()
        with _errors(f"storing {len(rows)} audit records in {self.path}", writing=True):
            cur.execute("BEGIN IMMEDIATE")
            try:
                for row in rows:
                    cur.execute("SAVEPOINT one_record")
                    try:
                        if self._insert(cur, row):
                            inserted += 1
                    except _UNSTORABLE as exc:
                        cur.execute("ROLLBACK TO one_record")
                        unstorable += 1
                        skipped(row["event_id"], exc)
                    cur.execute("RELEASE one_record")
                if evidence is not None:
                    self._insert_evidence(cur, evidence)
                cur.execute("COMMIT")
            except BaseException:
                if self.conn.in_transaction:
                    cur.execute("ROLLBACK")
                raise
        return inserted, unstorable

    @staticmethod
    def _insert(cur: sqlite3.Cursor, row: EventRow) -> bool:
        """Store one record unless its event_id is known; returns whether it was new."""
        values = {**row, "applied_at": row["applied_at"].isoformat(timespec="milliseconds")}
        cur.execute(_INSERT_EVENT, values)
        if cur.rowcount != 1:
            return False  # a replay: the same event_id changes nothing
        if row["is_verdict"]:
            cur.execute(_INSERT_VERDICT, values)
        elif row["is_station"]:
            cur.execute(_UPSERT_STATION, values)
        return True

    @staticmethod
    def _insert_evidence(cur: sqlite3.Cursor, evidence: Evidence) -> None:
        """The evidence rows, in consumed order (so the first entry of a key is the first stored)."""
        for sql, rows in (
            (_INSERT_ENTRY, evidence.entries),
            (_INSERT_VERDICT_RECORD, evidence.verdicts),
            (_INSERT_DRAFT, evidence.drafts),
            (_INSERT_REPORT_RECORD, evidence.reports),
            (_INSERT_JUDGEMENT_RECORD, evidence.judgements),
        ):
            for row in rows:
                cur.execute(sql, {**row, "applied_at": row["applied_at"].isoformat(timespec="milliseconds")})

    def _select(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        return [dict(row) for row in self._read(sql, params)]

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with _errors(f"reading {self.path}", self._unreadable):
            return self.conn.execute(sql, params).fetchall()

    def _unreadable(self, exc: sqlite3.Error) -> ConfigurationError:
        return ConfigurationError(
            f"cannot read {self.path} ({exc}); is it an audit database written by "
            "`evidence-chain audit-sink`? Point EC_AUDIT_DB or --db at one"
        )

    def counts(self) -> dict[str, int]:
        (one,) = self._read(
            "SELECT (SELECT count(*) FROM audit_events), "
            "(SELECT count(*) FROM (SELECT DISTINCT run_id, tool_call_id FROM tool_call_station)), "
            "(SELECT count(*) FROM guard_verdict)"
        )
        return {"events": one[0], "tool_calls": one[1], "verdicts": one[2]}

    def event_ids(self) -> set[str]:
        return {row[0] for row in self._read("SELECT event_id FROM audit_events")}

    def _trail_rows(self, run_id: str) -> list[TrailRow]:
        rows = self._read(
            "SELECT * FROM tool_invocation WHERE run_id = ? "
            "ORDER BY kind, origin_partition, origin_offset, tool_call_id, event_id",
            (run_id,),
        )
        return [cast(TrailRow, dict(row)) for row in rows]

    def _summary_rows(self, limit: int, offset: int = 0) -> tuple[list[SummaryRow], int, int]:
        rows = self._read(
            "SELECT * FROM run_summary "
            "ORDER BY last_source_timestamp DESC NULLS LAST, last_applied_at DESC, run_id LIMIT ? OFFSET ?",
            (limit, offset),
        )
        (totals,) = self._read(
            "SELECT (SELECT count(*) FROM run_summary), "
            "(SELECT count(*) FROM guard_verdict WHERE run_id IS NULL)"
        )
        return [cast(SummaryRow, dict(row)) for row in rows], totals[0], totals[1]

    def _guard_fields(self, run_id: str) -> list[tuple[str, str]]:
        rows = self._read(
            "SELECT event_id, fields FROM audit_events WHERE run_id = ? AND station = 'guard'", (run_id,)
        )
        return [(row[0], row[1]) for row in rows]
