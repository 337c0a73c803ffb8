"""The audit store: the ``tool_invocation`` table in SQLite, idempotent by ``event_id`` (SPEC 5).

Tables (one SQLite file, ``EC_AUDIT_DB``, WAL mode so ``inspect`` can read while the sink writes):

- ``audit_events`` — every distinct audit record, keyed by ``event_id``. This is the dedupe authority:
  a re-delivered input repeats its audit records with the same ``event_id`` (and a new
  ``processed_at``), so a record whose ``event_id`` is already here changes nothing anywhere.
- ``tool_call_station`` — the latest figures of one station for one tool call: primary key
  ``(run_id, tool_call_id, station)`` for station ``postprocess``, ``project``, ``ledger`` or
  ``dead-letter``, with the record's ``fields`` as JSON and its origin coordinates (to order them).
- ``guard_verdict`` — one row per guard audit record (``event_id`` = the verdict's): ``run_id``,
  ``draft_id``, ``attempt``, ``verdict``, ``violation_codes`` and ``cited_tool_call_ids`` (JSON lists).
- ``tool_invocation`` — a VIEW, the SPEC's table: one ``kind = 'tool_call'`` row per
  ``(run_id, tool_call_id)`` with every station's figures as columns (:data:`TOOL_CALL_COLUMNS`),
  and one ``kind = 'verdict'`` row per guard verdict (:data:`VERDICT_COLUMNS`). Query it with SQL,
  e.g. ``SELECT * FROM tool_invocation WHERE run_id = 'run-7f3a'``.

"Latest" is the origin's order, never the wall clock, so a replayed older record cannot overwrite
newer figures. A new record replaces a station's row only when it is strictly newer:

1. both origins are in the same topic and partition (always true for one run: ``raw-hits`` is keyed
   by ``run_id``) → the larger origin offset wins;
2. otherwise, both carry ``source_timestamp`` → the larger timestamp wins;
3. otherwise the order is unknown and the record applied later wins.

Equal positions are broken by the chain order of the station that dead-lettered (postprocess <
project < ledger), the only way two events of one origin can compete for one row; anything still
equal keeps the row already there. Audit records without both ids (an input whose ids were invalid)
are kept in ``audit_events`` only.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from models.events import AuditRecord
from models.vocab import Station
from streams import codec
from streams.envelope import read_origin
from streams.errors import ConfigurationError, InfrastructureError, MalformedAudit

log = logging.getLogger(__name__)

_STATIONS = frozenset(s.value for s in Station)
# Chain order of the station that dead-lettered: breaks ties between dead letters of one origin.
_CHAIN_RANK: dict[str, int] = {
    Station.POSTPROCESS: 1,
    Station.PROJECT: 2,
    Station.LEDGER: 3,
    Station.GUARD: 4,
}

_SCHEMA = """
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

_INSERT_EVENT = """
INSERT OR IGNORE INTO audit_events (event_id, run_id, tool_call_id, station, origin_topic, origin_partition,
    origin_offset, source_topic, source_partition, source_offset, source_timestamp, processed_at, fields,
    applied_at)
VALUES (:event_id, :run_id, :tool_call_id, :station, :origin_topic, :origin_partition, :origin_offset,
    :source_topic, :source_partition, :source_offset, :source_timestamp, :processed_at, :fields, :applied_at)
"""
_INSERT_VERDICT = """
INSERT OR IGNORE INTO guard_verdict (event_id, run_id, draft_id, attempt, verdict, violation_codes,
    cited_tool_call_ids, origin_topic, origin_partition, origin_offset, source_timestamp, processed_at,
    applied_at)
VALUES (:event_id, :run_id, :draft_id, :attempt, :verdict, :violation_codes, :cited_tool_call_ids,
    :origin_topic, :origin_partition, :origin_offset, :source_timestamp, :processed_at, :applied_at)
"""
# Only a strictly newer record (see the module docstring) replaces a station's row.
_UPSERT_STATION = """
INSERT INTO tool_call_station (run_id, tool_call_id, station, event_id, origin_topic, origin_partition,
    origin_offset, source_timestamp, tiebreak, processed_at, fields, applied_at)
VALUES (:run_id, :tool_call_id, :station, :event_id, :origin_topic, :origin_partition, :origin_offset,
    :source_timestamp, :tiebreak, :processed_at, :fields, :applied_at)
ON CONFLICT (run_id, tool_call_id, station) DO UPDATE SET
    (event_id, origin_topic, origin_partition, origin_offset, source_timestamp, tiebreak, processed_at,
     fields, applied_at) =
    (excluded.event_id, excluded.origin_topic, excluded.origin_partition, excluded.origin_offset,
     excluded.source_timestamp, excluded.tiebreak, excluded.processed_at, excluded.fields,
     excluded.applied_at)
WHERE CASE
    WHEN excluded.origin_offset IS NOT NULL AND tool_call_station.origin_offset IS NOT NULL
         AND excluded.origin_topic = tool_call_station.origin_topic
         AND excluded.origin_partition = tool_call_station.origin_partition
        THEN (excluded.origin_offset, excluded.tiebreak)
             > (tool_call_station.origin_offset, tool_call_station.tiebreak)
    WHEN excluded.source_timestamp IS NOT NULL AND tool_call_station.source_timestamp IS NOT NULL
        THEN (excluded.source_timestamp, excluded.tiebreak)
             > (tool_call_station.source_timestamp, tool_call_station.tiebreak)
    ELSE 1
END
"""


def _pp(name: str) -> str:
    return f"json_extract(pp.fields, '$.{name}')"


def _pj(name: str) -> str:
    return f"json_extract(pj.fields, '$.{name}')"


TOOL_CALL_COLUMNS: tuple[tuple[str, str], ...] = (
    (
        "origin_partition",
        "coalesce(pp.origin_partition, pj.origin_partition, lg.origin_partition, dl.origin_partition)",
    ),
    ("origin_offset", "coalesce(pp.origin_offset, pj.origin_offset, lg.origin_offset, dl.origin_offset)"),
    (
        "source_timestamp",
        "coalesce(pp.source_timestamp, pj.source_timestamp, lg.source_timestamp, dl.source_timestamp)",
    ),
    # postprocess
    ("postprocess_status", f"CASE WHEN pp.event_id IS NOT NULL THEN coalesce({_pp('status')}, 'OK') END"),
    ("postprocess_failure_reason", _pp("reason")),
    ("candidate_count", _pp("candidate_count")),
    ("evidence_block_count", _pp("evidence_block_count")),
    ("top_similarity", _pp("top_similarity")),
    ("relevance_level", _pp("relevance_level")),
    ("low_quality", _pp("low_quality")),
    ("py_rag_relevance_level", _pp("py_rag_relevance_level")),
    ("py_rag_evidence_status", _pp("py_rag_evidence_status")),
    ("contract_anomaly", _pp("contract_anomaly")),
    ("retrieval_trace", _pp("retrieval_trace")),
    ("pack_used_chars", _pp("pack_used_chars")),
    ("pack_included", _pp("pack_included")),
    ("pack_omitted", _pp("pack_omitted")),
    # project
    (
        "project_status",
        f"CASE WHEN {_pj('projection_sha256')} IS NOT NULL THEN 'OK' ELSE {_pj('status')} END",
    ),
    ("project_failure_reason", _pj("failure_reason")),
    ("evidence_status", _pj("evidence_status")),
    ("returned_count", _pj("returned_count")),
    ("projected_relevance_level", _pj("relevance_level")),
    ("truncated", _pj("truncated")),
    ("projection_bytes", _pj("projection_bytes")),
    ("projection_sha256", _pj("projection_sha256")),
    # ledger
    ("ledger_status", "json_extract(lg.fields, '$.status')"),
    ("ledger_outcome", "json_extract(lg.fields, '$.outcome')"),
    ("ledger_key", "json_extract(lg.fields, '$.key')"),
    # dead letter (the latest one for this tool call)
    ("dead_letter_reason", "json_extract(dl.fields, '$.reason')"),
    ("dead_letter_error", "json_extract(dl.fields, '$.error')"),
    ("dead_letter_station", "json_extract(dl.fields, '$.station')"),
    ("dead_letter_event_id", "dl.event_id"),
)
"""Columns of a ``tool_call`` row of ``tool_invocation`` and the SQL that reads them."""

VERDICT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("event_id", "v.event_id"),
    ("draft_id", "v.draft_id"),
    ("attempt", "v.attempt"),
    ("verdict", "v.verdict"),
    ("violation_codes", "v.violation_codes"),
    ("cited_tool_call_ids", "v.cited_tool_call_ids"),
)
"""Columns only a ``verdict`` row of ``tool_invocation`` fills (plus run and origin columns)."""

_VERDICT_SHARED = {
    "origin_partition": "v.origin_partition",
    "origin_offset": "v.origin_offset",
    "source_timestamp": "v.source_timestamp",
}


def _view_sql() -> str:
    names = [
        "kind",
        "run_id",
        "tool_call_id",
        *(n for n, _ in TOOL_CALL_COLUMNS),
        *(n for n, _ in VERDICT_COLUMNS),
        "updated_at",
    ]
    tool_call = {
        "kind": "'tool_call'",
        "run_id": "k.run_id",
        "tool_call_id": "k.tool_call_id",
        **dict(TOOL_CALL_COLUMNS),
        "updated_at": "max(coalesce(pp.applied_at, ''), coalesce(pj.applied_at, ''), "
        "coalesce(lg.applied_at, ''), coalesce(dl.applied_at, ''))",
    }
    verdict = {
        "kind": "'verdict'",
        "run_id": "v.run_id",
        **_VERDICT_SHARED,
        **dict(VERDICT_COLUMNS),
        "updated_at": "v.applied_at",
    }
    joins = "\n".join(
        f"LEFT JOIN tool_call_station {alias} ON {alias}.run_id = k.run_id "
        f"AND {alias}.tool_call_id = k.tool_call_id AND {alias}.station = '{station}'"
        for alias, station in (
            ("pp", "postprocess"),
            ("pj", "project"),
            ("lg", "ledger"),
            ("dl", "dead-letter"),
        )
    )
    return (
        "CREATE VIEW tool_invocation AS\nSELECT "  # noqa: S608 - built from the constant column lists
        + ", ".join(f"{tool_call.get(n, 'NULL')} AS {n}" for n in names)
        + "\nFROM (SELECT DISTINCT run_id, tool_call_id FROM tool_call_station) AS k\n"
        + joins
        + "\nUNION ALL\nSELECT "
        + ", ".join(f"{verdict.get(n, 'NULL')} AS {n}" for n in names)
        + "\nFROM guard_verdict AS v"
    )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class AuditStoreBusy(InfrastructureError):
    """The audit database is busy or its disk failed; nothing of the batch was stored, retry it."""


_UNSTORABLE = (
    OverflowError,
    ValueError,
    TypeError,
    sqlite3.IntegrityError,
    sqlite3.InterfaceError,
    sqlite3.DataError,
)
"""What one record can raise that no retry will cure (an integer beyond SQLite's 64 bits, ...)."""


def check_record(doc: Any) -> AuditRecord:
    """``doc`` as an :class:`AuditRecord` when it has the envelope every agent writes.

    Raises:
        MalformedAudit: a field is missing or has the wrong type (the message names it).
    """
    if not isinstance(doc, dict):
        raise MalformedAudit(f"an audit record is a JSON object, not {type(doc).__name__}")
    event = doc.get("event_id")
    if not isinstance(event, str) or not event:
        raise MalformedAudit("event_id must be a non-empty string")
    if doc.get("station") not in _STATIONS:
        raise MalformedAudit(f"{event}: station {doc.get('station')!r} is not one of {sorted(_STATIONS)}")
    for name in ("run_id", "tool_call_id"):
        if doc.get(name) is not None and not isinstance(doc.get(name), str):
            raise MalformedAudit(f"{event}: {name} must be a string or null")
    source = doc.get("source")
    if not (
        isinstance(source, dict)
        and isinstance(source.get("topic"), str)
        and _is_int(source.get("partition"))
        and _is_int(source.get("offset"))
    ):
        raise MalformedAudit(f"{event}: source must be {{topic, partition, offset}}")
    if doc.get("origin") is not None and read_origin(doc["origin"]) is None:
        raise MalformedAudit(f"{event}: origin must be {{topic, partition, offset, timestamp}} or null")
    if doc.get("source_timestamp") is not None and not _is_int(doc["source_timestamp"]):
        raise MalformedAudit(f"{event}: source_timestamp must be an integer (epoch ms) or null")
    if not isinstance(doc.get("processed_at"), str):
        raise MalformedAudit(f"{event}: processed_at must be a string")
    if not isinstance(doc.get("fields"), dict):
        raise MalformedAudit(f"{event}: fields must be an object")
    return cast(AuditRecord, doc)


def decode_record(value: bytes | None) -> AuditRecord:
    """One ``audit`` topic value as an :class:`AuditRecord`.

    Raises:
        MalformedAudit: the value is empty, not strict JSON, or not an audit record.
    """
    if value is None:
        raise MalformedAudit("the value is empty (a tombstone)")
    try:
        doc = codec.loads(value)
    except codec.JSONDecodeError as exc:
        raise MalformedAudit(f"not strict JSON: {exc}") from exc
    return check_record(doc)


@dataclass
class ApplyStats:
    """What an :class:`AuditStore` has seen since it was opened."""

    seen: int = 0
    inserted: int = 0
    malformed: int = 0

    @property
    def replays(self) -> int:
        """Records dropped because their ``event_id`` was already stored."""
        return self.seen - self.inserted - self.malformed


class AuditStore:
    """The audit tables in one SQLite file; one writer (the sink), any number of readers."""

    def __init__(self, conn: sqlite3.Connection, path: str) -> None:
        self.conn = conn
        self.path = path
        self.stats = ApplyStats()

    @classmethod
    def open(cls, path: str | Path, *, readonly: bool = False) -> AuditStore:
        """Open (and, for writing, create) the audit database at ``path``.

        Raises:
            ConfigurationError: the file cannot be opened or is not an SQLite database.
        """
        where = str(path)
        try:
            if readonly:
                if not Path(where).is_file():
                    raise ConfigurationError(f"no audit database at {where}; run `evidence-chain audit-sink`")
                conn = sqlite3.connect(f"{Path(where).resolve().as_uri()}?mode=ro", uri=True)
                conn.execute("PRAGMA busy_timeout=5000")
            else:
                # The sink applies batches in a worker thread (asyncio.to_thread), one at a time.
                conn = sqlite3.connect(where, isolation_level=None, check_same_thread=False)
                conn.execute("PRAGMA busy_timeout=5000")
                conn.execute("PRAGMA journal_mode=WAL")
                # FULL: a committed batch survives power loss before its Kafka offsets are committed.
                conn.execute("PRAGMA synchronous=FULL")
                conn.executescript(_SCHEMA)
                conn.execute("DROP VIEW IF EXISTS tool_invocation")
                conn.execute(_view_sql())
        except sqlite3.Error as exc:
            raise ConfigurationError(
                f"cannot use {where} as the audit database ({exc}); set EC_AUDIT_DB (or --db) to a "
                "writable SQLite file"
            ) from exc
        conn.row_factory = sqlite3.Row
        return cls(conn, where)

    def close(self) -> None:
        """Close the connection (a WAL checkpoint happens on the last close)."""
        self.conn.close()

    def decode(self, values: Iterable[tuple[str, bytes | None]]) -> list[AuditRecord]:
        """Decode ``(where, value)`` pairs of the ``audit`` topic.

        Malformed values are logged with their ``topic[partition]@offset`` and counted, never raised.
        """
        records: list[AuditRecord] = []
        for where, value in values:
            try:
                records.append(decode_record(value))
            except MalformedAudit as exc:
                self.stats.seen += 1
                self.stats.malformed += 1
                log.warning("%s: malformed audit record skipped: %s", where, exc)
        return records

    def apply_values(self, values: Iterable[tuple[str, bytes | None]]) -> int:
        """:meth:`decode` then :meth:`apply`; returns the number of new events stored."""
        return self.apply(self.decode(values))

    def apply(self, records: Sequence[AuditRecord]) -> int:
        """Store the records whose ``event_id`` is new, all in one transaction; returns how many.

        A record seen before changes nothing. A record that cannot be stored (malformed, or with a
        value SQLite cannot hold, such as an integer beyond 64 bits) is logged, counted as
        malformed and skipped; the rest of the batch is stored.

        Raises:
            AuditStoreBusy: the database is busy or the disk failed; nothing was stored.
        """
        applied_at = datetime.now(UTC).isoformat(timespec="milliseconds")
        inserted = malformed = 0
        cur = self.conn.cursor()
        try:
            cur.execute("BEGIN IMMEDIATE")
            try:
                for candidate in records:
                    try:
                        record = check_record(candidate)
                    except MalformedAudit as exc:
                        malformed += 1
                        log.warning("malformed audit record skipped: %s", exc)
                        continue
                    cur.execute("SAVEPOINT one_record")
                    try:
                        if self._insert(cur, record, applied_at):
                            inserted += 1
                    except _UNSTORABLE as exc:
                        cur.execute("ROLLBACK TO one_record")
                        malformed += 1
                        log.warning(
                            "audit record %s cannot be stored, skipped: %s: %s",
                            str(record.get("event_id"))[:200],
                            type(exc).__name__,
                            exc,
                        )
                    cur.execute("RELEASE one_record")
                cur.execute("COMMIT")
            except BaseException:
                if self.conn.in_transaction:
                    cur.execute("ROLLBACK")
                raise
        except sqlite3.OperationalError as exc:
            raise AuditStoreBusy(f"storing {len(records)} audit records in {self.path}: {exc}") from exc
        self.stats.seen += len(records)
        self.stats.inserted += inserted
        self.stats.malformed += malformed
        return inserted

    def _insert(self, cur: sqlite3.Cursor, record: AuditRecord, applied_at: str) -> bool:
        """Store one record unless its event_id is known; returns whether it was new."""
        origin = read_origin(record["origin"])
        fields = record["fields"]
        dead_letter = record["station"] == Station.DEAD_LETTER
        attempt = fields.get("attempt")
        row = {
            **{k: record[k] for k in ("event_id", "run_id", "tool_call_id", "station")},
            "origin_topic": origin["topic"] if origin else None,
            "origin_partition": origin["partition"] if origin else None,
            "origin_offset": origin["offset"] if origin else None,
            **{f"source_{k}": v for k, v in record["source"].items()},
            "source_timestamp": record["source_timestamp"],
            "processed_at": record["processed_at"],
            "fields": codec.dumps(fields).decode(),
            "applied_at": applied_at,
            "tiebreak": _CHAIN_RANK.get(str(fields.get("station")), 0) if dead_letter else 0,
            "draft_id": _text(fields.get("draft_id")),
            "attempt": attempt if _is_int(attempt) else None,
            "verdict": _text(fields.get("verdict")),
            "violation_codes": codec.dumps(fields.get("violation_codes") or []).decode(),
            "cited_tool_call_ids": codec.dumps(fields.get("cited_tool_call_ids") or []).decode(),
        }
        cur.execute(_INSERT_EVENT, row)
        if cur.rowcount != 1:
            return False  # a replay: the same event_id changes nothing
        if record["station"] == Station.GUARD:
            cur.execute(_INSERT_VERDICT, row)
        elif record["run_id"] is not None and record["tool_call_id"] is not None:
            cur.execute(_UPSERT_STATION, row)
        return True

    def counts(self) -> dict[str, int]:
        """Rows per table: ``events``, ``tool_calls`` (distinct run/tool call pairs), ``verdicts``."""
        one = self.conn.execute(
            "SELECT (SELECT count(*) FROM audit_events), "
            "(SELECT count(*) FROM (SELECT DISTINCT run_id, tool_call_id FROM tool_call_station)), "
            "(SELECT count(*) FROM guard_verdict)"
        ).fetchone()
        return {"events": one[0], "tool_calls": one[1], "verdicts": one[2]}

    def event_ids(self) -> set[str]:
        """Every stored ``event_id`` (for checks and tests)."""
        return {row[0] for row in self.conn.execute("SELECT event_id FROM audit_events")}

    def run_trail(self, run_id: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The ``tool_invocation`` rows of one run: tool calls (in origin order) and verdicts."""
        rows = self.conn.execute(
            "SELECT * FROM tool_invocation WHERE run_id = ? "
            "ORDER BY kind, origin_partition, origin_offset, tool_call_id, event_id",
            (run_id,),
        ).fetchall()
        tool_calls, verdicts = [], []
        for row in rows:
            item = dict(row)
            kind = item.pop("kind")
            if kind == "tool_call":
                for name in ("low_quality", "truncated"):
                    item[name] = None if item[name] is None else bool(item[name])
                if item["retrieval_trace"] is not None:
                    item["retrieval_trace"] = codec.loads(item["retrieval_trace"])
                tool_calls.append(
                    {k: item[k] for k in ("run_id", "tool_call_id", *dict(TOOL_CALL_COLUMNS), "updated_at")}
                )
            else:
                item["violation_codes"] = codec.loads(item["violation_codes"])
                item["cited_tool_call_ids"] = codec.loads(item["cited_tool_call_ids"])
                verdicts.append(
                    {k: item[k] for k in ("run_id", *dict(VERDICT_COLUMNS), *_VERDICT_SHARED, "updated_at")}
                )
        return tool_calls, verdicts


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
