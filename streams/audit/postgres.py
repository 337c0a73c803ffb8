"""The audit store in PostgreSQL (``EC_AUDIT_DSN=postgresql://user:pass@host:port/db``), with psycopg 3.

The same tables, views and rules as the SQLite backend (:mod:`streams.audit.store`). A batch is one
statement per record, pipelined by ``executemany`` inside one transaction that commits before
:meth:`PostgresAuditStore.apply` returns; each statement inserts the event and, only when it was new,
its verdict or station row, so the dedupe by ``event_id`` and the "latest by origin order" rule are
exactly SQLite's. PostgreSQL text cannot hold NUL: a ``U+0000`` anywhere in a record is stored as
``U+FFFD``. The DSN's password is never printed: messages name the database as
:func:`streams.redaction.redact_url` shows it. A DSN may name several hosts (libpq tries them in turn).

psycopg's errors are translated here: unreachable, shutting down, a lost connection → the retriable
:class:`AuditStoreBusy` (the writer reconnects on its next batch); a DSN libpq cannot read, a wrong
password, database or schema → :class:`ConfigurationError`. A failed connect is described in fixed
words, never with libpq's message: that quotes the DSN's tokens (``invalid percent-encoded token``)
and the server quotes option values (``invalid value for parameter "work_mem": "..."``).
"""

from __future__ import annotations

import logging
import textwrap
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, cast

from models.audit import AuditRecord
from streams import codec
from streams.audit.evidence import Evidence
from streams.audit.migrations import pending
from streams.audit.migrations import postgres as migrations
from streams.audit.store import AuditStore, EventRow, SummaryRow, TrailRow, skipped
from streams.audit.tables import (
    AUDIT_EVENTS,
    DRAFT_RECORD,
    GUARD_VERDICT,
    JUDGEMENT_RECORD,
    REPORT_RECORD,
    VERDICT_RECORD,
    Dialect,
    insert_entry,
    insert_once,
    upsert_station,
)
from streams.errors import AuditStoreBusy, ConfigurationError, EvidenceChainError
from streams.redaction import check_postgres_dsn, redact_url

try:
    import psycopg
    from psycopg.rows import dict_row
    from psycopg.types.json import set_json_loads
except ModuleNotFoundError as exc:  # pragma: no cover - depends on the installation
    raise ConfigurationError(
        "the audit database is PostgreSQL (EC_AUDIT_DSN or --db), but psycopg is not installed: "
        "pip install 'evidence-chain[postgres]' (or leave EC_AUDIT_DSN unset to use SQLite)"
    ) from exc

log = logging.getLogger(__name__)

_PG: Dialect = "postgresql"


def _cte(name: str, statement: str) -> str:
    return f"{name} AS (\n{textwrap.indent(statement, '    ')}\n)"


# One statement per record. Data-modifying CTEs always run to completion and see the same snapshot:
# the verdict or station row is written only when the event was new (`FROM ins` is then one row).
_APPLY = "WITH {}, {}, {}\nSELECT count(*) FROM ins".format(
    _cte("ins", f"{insert_once(AUDIT_EVENTS, _PG)}\nRETURNING 1"),
    _cte("verdict", insert_once(GUARD_VERDICT, _PG, select_from="ins WHERE %(is_verdict)s::boolean")),
    _cte("station", upsert_station(_PG, select_from="ins WHERE %(is_station)s::boolean")),
)
_INSERT_ENTRY = insert_entry(_PG).encode()  # the first entry of a key wins; a later different one: a flag
_INSERT_VERDICT_RECORD = insert_once(VERDICT_RECORD, _PG).encode()
_INSERT_REPORT_RECORD = insert_once(REPORT_RECORD, _PG).encode()
_INSERT_JUDGEMENT_RECORD = insert_once(JUDGEMENT_RECORD, _PG).encode()
_INSERT_DRAFT = insert_once(DRAFT_RECORD, _PG).encode()

# What a failed connect says, as (words libpq or the server use, what we say): only our words are
# printed. A server-side FATAL is a wrong password, role, database or option, unless it is transient.
_TRANSIENT_FATAL = (
    ("starting up", "the server is starting up"),
    ("shutting down", "the server is shutting down"),
    ("too many", "too many connections"),
    ("recovery", "the server is in recovery"),
    ("terminating", "the server is terminating connections"),
    ("not yet accepting", "the server is not yet accepting connections"),
)
_REFUSED_FATAL = (
    ("password authentication failed", "password authentication failed"),
    ("authentication failed", "authentication failed"),
    ("no pg_hba.conf entry", "pg_hba.conf has no entry for this user, database and address"),
    ("does not exist", "the role or database does not exist"),
    ("permission denied", "permission denied"),
    ("parameter", "an option in the DSN (options=, or a setting) has a bad name or value"),
)
# Client-side: libpq cannot use what the DSN says (a port that is no number, ports and hosts that
# do not pair up, an sslmode it does not know, ...).
_UNUSABLE = ("invalid", "could not match", "missing", "unterminated", "unexpected", "forbidden")
_UNREACHED = (
    ("refused", "connection refused"),
    ("timeout", "timed out"),
    ("timed out", "timed out"),
    ("resolve", "the host name does not resolve"),
    ("translate host name", "the host name does not resolve"),
    ("no route", "no route to the host"),
    ("unreachable", "the network is unreachable"),
    ("closed the connection", "the server closed the connection"),
    ("ssl", "the TLS handshake failed"),
)
_UNSTORABLE = (psycopg.DataError, psycopg.IntegrityError)
_UNREACHABLE = (psycopg.OperationalError, psycopg.InterfaceError, psycopg.InternalError)

Connection = psycopg.Connection[Any]


def _no_nul(value: Any) -> Any:
    """``value`` with every NUL character (which PostgreSQL text and jsonb refuse) replaced by U+FFFD."""
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd") if "\x00" in value else value
    if isinstance(value, dict):
        return {_no_nul(k): _no_nul(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_no_nul(v) for v in value]
    return value


class PostgresAuditStore(AuditStore):
    """The audit tables in one PostgreSQL database; one writer (the sink), any number of readers."""

    backend = "postgresql"

    def __init__(self, dsn: str, conn: Connection, *, readonly: bool, versions: Sequence[int]) -> None:
        super().__init__(redact_url(dsn), readonly=readonly, versions=versions)
        self._dsn = dsn
        self._conn: Connection | None = conn

    @classmethod
    def connect(cls, dsn: str, *, readonly: bool = False) -> PostgresAuditStore:
        """Connect (and, for writing, migrate) the audit database ``dsn``.

        Raises:
            ConfigurationError: a DSN libpq cannot read; wrong password, role, database or schema
                (retrying cannot help).
            AuditStoreBusy: the server cannot be reached now.
        """
        try:
            check_postgres_dsn(dsn)  # also for ``--db``, which no settings validator has seen
        except ValueError as exc:
            raise ConfigurationError(f"EC_AUDIT_DSN (or --db) cannot work: {exc}") from None
        conn = _connect(dsn, readonly=readonly)
        where = redact_url(dsn)
        try:
            with _errors(f"preparing the audit database {where}"):
                versions = _prepare(conn, where, readonly=readonly)
        except BaseException:
            conn.close()
            raise
        return cls(dsn, conn, readonly=readonly, versions=versions)

    def close(self) -> None:
        """Close the connection."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _live(self) -> Connection:
        """The connection, opened again if the last one was lost (the writer lives through outages)."""
        if self._conn is None or self._conn.closed or self._conn.broken:
            if self._conn is not None:
                self._conn.close()
            self._conn = None
            self._conn = _connect(self._dsn, readonly=self.readonly)
        return self._conn

    def _storable(self, record: AuditRecord) -> AuditRecord:
        return cast(AuditRecord, _no_nul(record))

    def _write(self, rows: Sequence[EventRow], evidence: Evidence | None) -> tuple[int, int]:
        with _errors(f"storing {len(rows)} audit records in {self.where}", writing=True):
            conn = self._live()
            try:
                with conn.transaction(), conn.cursor() as cur:
                    inserted = 0
                    if rows:
                        cur.executemany(_APPLY, rows, returning=True)
                        while True:
                            got = cur.fetchone()
                            inserted += int(got[0]) if got else 0
                            if not cur.nextset():
                                break
                    _insert_evidence(cur, evidence)
                return inserted, 0
            except _UNSTORABLE as exc:
                log.warning(
                    "a record of a batch of %d cannot be stored (%s: %s); storing them one by one",
                    len(rows),
                    type(exc).__name__,
                    exc,
                )
            return self._write_each(conn, rows, evidence)

    @staticmethod
    def _write_each(
        conn: Connection, rows: Sequence[EventRow], evidence: Evidence | None
    ) -> tuple[int, int]:
        """The slow path: one savepoint per record, so one that cannot be stored is skipped alone."""
        inserted = unstorable = 0
        with conn.transaction(), conn.cursor() as cur:
            for row in rows:
                try:
                    with conn.transaction():
                        cur.execute(_APPLY, row)
                        got = cur.fetchone()
                        inserted += int(got[0]) if got else 0
                except _UNSTORABLE as exc:
                    unstorable += 1
                    skipped(row["event_id"], exc)
            _insert_evidence(cur, evidence)
        return inserted, unstorable

    def _read(self, sql: bytes, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        with _errors(f"reading the audit database {self.where}"):
            conn = self._live()
            with conn.cursor(row_factory=dict_row) as cur:
                cur.execute(sql, params)
                return cur.fetchall()

    def _select(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        return self._read(sql.replace("?", "%s").encode(), params)

    def counts(self) -> dict[str, int]:
        (one,) = self._read(
            b"SELECT (SELECT count(*) FROM audit_events) AS events, "
            b"(SELECT count(*) FROM (SELECT DISTINCT run_id, tool_call_id FROM tool_call_station) AS k) "
            b"AS tool_calls, (SELECT count(*) FROM guard_verdict) AS verdicts"
        )
        return {name: int(value) for name, value in one.items()}

    def event_ids(self) -> set[str]:
        return {row["event_id"] for row in self._read(b"SELECT event_id FROM audit_events")}

    def _trail_rows(self, run_id: str) -> list[TrailRow]:
        # SQLite's order: NULLs first, strings by code point.
        rows = self._read(
            b'SELECT * FROM tool_invocation WHERE run_id = %s ORDER BY kind COLLATE "C", '
            b"origin_partition NULLS FIRST, origin_offset NULLS FIRST, "
            b'tool_call_id COLLATE "C" NULLS FIRST, event_id COLLATE "C" NULLS FIRST',
            (run_id,),
        )
        return cast(list[TrailRow], rows)

    def _summary_rows(self, limit: int, offset: int = 0) -> tuple[list[SummaryRow], int, int]:
        rows = self._read(
            b"SELECT * FROM run_summary ORDER BY last_source_timestamp DESC NULLS LAST, "
            b'last_applied_at DESC, run_id COLLATE "C" LIMIT %s OFFSET %s',
            (limit, offset),
        )
        (totals,) = self._read(
            b"SELECT (SELECT count(*) FROM run_summary) AS runs, "
            b"(SELECT count(*) FROM guard_verdict WHERE run_id IS NULL) AS orphans"
        )
        return cast(list[SummaryRow], rows), int(totals["runs"]), int(totals["orphans"])

    def _guard_fields(self, run_id: str) -> list[tuple[str, str]]:
        rows = self._read(
            b"SELECT event_id, fields::text AS fields FROM audit_events "
            b"WHERE run_id = %s AND station = 'guard'",
            (run_id,),
        )
        return [(row["event_id"], row["fields"]) for row in rows]


def _insert_evidence(cur: psycopg.Cursor[Any], evidence: Evidence | None) -> None:
    """The evidence rows, in consumed order (so the first entry of a key is the first stored). The JSON
    texts never hold a raw NUL (JSON escapes it); an id decoded from one may, and is stored as U+FFFD."""
    if evidence is None:
        return
    for sql, rows in (
        (_INSERT_ENTRY, evidence.entries),
        (_INSERT_VERDICT_RECORD, evidence.verdicts),
        (_INSERT_DRAFT, evidence.drafts),
        (_INSERT_REPORT_RECORD, evidence.reports),
        (_INSERT_JUDGEMENT_RECORD, evidence.judgements),
    ):
        if rows:
            cur.executemany(sql, [_no_nul(row) for row in rows])


def _prepare(conn: Connection, where: str, *, readonly: bool) -> list[int]:
    """Migrate (a writer) or check (a reader) the schema; returns the versions the database has.

    Raises:
        ConfigurationError: a reader found no audit tables, or the schema is newer than this code.
    """
    if not readonly:
        applied = migrations.migrate(conn, where)
        if applied:
            log.info("audit database %s: applied schema versions %s", where, applied)
        return migrations.versions(conn)
    versions = migrations.versions(conn)
    if not versions:
        raise ConfigurationError(
            f"the database {where} holds no audit tables yet; start `evidence-chain audit-sink` with "
            "EC_AUDIT_DSN pointing at it (it creates them)"
        )
    pending(migrations.MIGRATIONS, versions, where)  # refuses a newer schema
    return versions


def _connect(dsn: str, *, readonly: bool) -> Connection:
    """A connection in autocommit mode (writes use explicit transactions); a reader's is read-only.

    Raises:
        ConfigurationError: libpq cannot use the DSN; the server refused the password, role,
            database or an option.
        AuditStoreBusy: the server cannot be reached or is not accepting connections now.
    """
    try:
        conn = psycopg.connect(
            dsn, autocommit=True, connect_timeout=10, application_name="evidence-chain audit"
        )
    except psycopg.Error as exc:
        # `from None`: the cause's text is libpq's, which may quote the password (see the docstring).
        raise _connect_error(exc, redact_url(dsn)) from None
    # Rows read back the same Python values as from SQLite: jsonb through the project's JSON codec.
    set_json_loads(codec.loads, conn)
    if readonly:
        conn.execute("SET default_transaction_read_only = on")
    return conn


def _connect_error(exc: psycopg.Error, where: str) -> EvidenceChainError:
    """A failed connect in this project's terms and in fixed words (never libpq's, see the docstring)."""
    text = str(exc)
    lowered = text.lower()
    if "FATAL:" in text:
        transient = next((said for word, said in _TRANSIENT_FATAL if word in lowered), None)
        if transient is not None:
            return AuditStoreBusy(f"cannot connect to the audit database {where} now: {transient}")
        refused = next(
            (said for word, said in _REFUSED_FATAL if word in lowered), "it refused the connection"
        )
        return ConfigurationError(
            f"the PostgreSQL server refused the audit database {where}: {refused}; check EC_AUDIT_DSN "
            "(user, password, database name, options)"
        )
    if not isinstance(exc, psycopg.OperationalError) or any(word in lowered for word in _UNUSABLE):
        return ConfigurationError(
            f"libpq cannot use the audit database DSN {where}: a malformed value or an unknown option; "
            "check EC_AUDIT_DSN (ports are numbers, one per host or one for all; %-encode '%/?#@ ')"
        )
    reason = next((said for word, said in _UNREACHED if word in lowered), "the connection failed")
    return AuditStoreBusy(f"cannot reach the audit database {where}: {reason}")


@contextmanager
def _errors(what: str, *, writing: bool = False) -> Iterator[None]:
    """psycopg's errors as this project's: unreachable → AuditStoreBusy, the rest → ConfigurationError."""
    try:
        yield
    except _UNREACHABLE as exc:
        raise AuditStoreBusy(f"{what}: {type(exc).__name__}: {exc}".strip()) from exc
    except psycopg.Error as exc:
        hint = (
            "the audit tables may have been changed by hand; restart `evidence-chain audit-sink` to migrate"
            if writing
            else "is it a database `evidence-chain audit-sink` wrote? Check EC_AUDIT_DSN"
        )
        raise ConfigurationError(f"{what}: {type(exc).__name__}: {exc} ({hint})") from exc
