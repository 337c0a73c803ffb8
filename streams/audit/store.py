"""The audit store: the ``tool_invocation`` table, idempotent by ``event_id`` (SPEC 5), two backends.

One interface, :class:`AuditStore`, two backends with the same tables, views and rules:
:mod:`streams.audit.sqlite` (a file, ``EC_AUDIT_DB``, the default) and :mod:`streams.audit.postgres`
(``EC_AUDIT_DSN=postgresql://...``). ``streams.audit.factory.store_from_settings`` picks one. The schema is
versioned (:mod:`streams.audit.migrations`): the sink migrates at open, readers never do.

Tables:

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
- ``run_summary`` — a VIEW: one row per run with its tool calls, dead letters and verdicts by outcome.
- ``ledger_entry``, ``verdict_record``, ``draft_record`` (version 3) — the evidence itself, as the
  ``ledger``, ``verdicts`` and ``diagnosis-drafts`` topics carried it (:mod:`streams.audit.evidence`),
  so the run page and receipts outlive the Redis ledger.
- ``judgement_record`` (version 5) — every judgement of the semantic review (SPEC 4.4), as the
  ``judgements`` topic carried it, keyed by its ``event_id``;
- ``report_record`` (version 4) — every published report as the ``reports`` topic carried it, keyed by
  its ``event_id``: what left the chain for each draft (``inspect``, the run page).

"Latest" is the origin's order, never the wall clock, so a replayed older record cannot overwrite
newer figures. A new record replaces a station's row only when it is strictly newer:

1. both origins are in the same topic and partition (always true for one run: ``raw-hits`` is keyed
   by ``run_id``) → the larger origin offset wins;
2. otherwise, both carry ``source_timestamp`` → the larger timestamp wins;
3. otherwise the order is unknown and the record applied later wins.

Equal positions are broken by the chain order of the station that dead-lettered (postprocess <
project < ledger), the only way two events of one origin can compete for one row; anything still
equal keeps the row already there. Audit records without both ids (an input whose ids were invalid)
are kept in ``audit_events`` only. A record neither database can hold (an integer beyond 64 bits) is
counted as malformed and skipped; the rest of its batch is stored.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeGuard, cast

from typing_extensions import TypedDict

from models.audit import (
    AuditRecord,
    RunOverview,
    RunSummary,
    StationRecord,
    ToolCallRow,
    VerdictRow,
    ViolationLink,
)
from models.ledger import LedgerEntry
from models.semantic import JudgementEvent
from models.verdict import ReportEvent, Verdict
from models.vocab import Station
from streams import codec
from streams.audit.evidence import Evidence
from streams.envelope import read_origin
from streams.errors import ConfigurationError, MalformedAudit, Unstorable
from streams.redaction import POSTGRES_SCHEMES, is_conninfo, redact_url

if TYPE_CHECKING:
    from streams.settings import Settings

__all__ = [
    "ApplyStats",
    "AuditStore",
    "DraftRead",
    "EventRow",
    "StoredEntry",
    "SummaryRow",
    "TrailRow",
    "check_record",
    "decode_record",
    "is_dsn",
    "skipped",
]

log = logging.getLogger(__name__)

_STATIONS = frozenset(s.value for s in Station)
# Chain order of the station that dead-lettered: breaks ties between dead letters of one origin.
_CHAIN_RANK: dict[str, int] = {
    Station.POSTPROCESS: 1,
    Station.PROJECT: 2,
    Station.LEDGER: 3,
    Station.GUARD: 4,
}
_INT64 = range(-(2**63), 2**63)
_INT_COLUMNS = (
    "origin_partition",
    "origin_offset",
    "source_partition",
    "source_offset",
    "source_timestamp",
    "attempt",
)
EVIDENCE_VERSION = 3
"""The schema version that holds ledger entries, verdicts and drafts (:mod:`streams.audit.evidence`)."""
REPORTS_VERSION = 4
"""The schema version that holds the published reports (``report_record``)."""
JUDGEMENTS_VERSION = 5
"""The schema version that holds the semantic review's judgements (``judgement_record``, SPEC 4.4)."""
VERDICT_OUTCOMES = ("PASS", "REJECT", "FALLBACK")
"""The verdicts ``run_summary`` counts, in the order pages show them."""


def is_dsn(target: str | Path) -> bool:
    """Whether ``target`` is a PostgreSQL DSN rather than a file: ``postgresql://`` or ``postgres://``
    (in any case: libpq's refusal of upper case is then explained), or libpq key/value words
    (``host=h1,h2 dbname=audit``)."""
    if not isinstance(target, str):
        return False
    return target.lower().startswith(POSTGRES_SCHEMES) or is_conninfo(target)


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


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


class EventRow(TypedDict):
    """One audit record's values for ``audit_events``, ``tool_call_station`` and ``guard_verdict`` (each
    backend's statements take what they name; :mod:`streams.audit.tables`)."""

    event_id: str
    run_id: str | None
    tool_call_id: str | None
    station: str
    origin_topic: str | None
    origin_partition: int | None
    origin_offset: int | None
    source_topic: str
    source_partition: int
    source_offset: int
    source_timestamp: int | None
    processed_at: str
    fields: str
    """The figures as JSON text."""
    applied_at: datetime
    tiebreak: int
    draft_id: str | None
    attempt: int | None
    verdict: str | None
    violation_codes: str
    cited_tool_call_ids: str
    is_verdict: bool
    """A draft's verdict row: the guard's, or the semantic review's when it gave the verdict."""
    is_station: bool
    """A tool call's row of one station (postprocess, project, ledger, dead letter)."""


class TrailRow(ToolCallRow, VerdictRow):
    """A ``tool_invocation`` row as the database returns it: ``kind`` says which columns are the row's."""

    kind: Literal["tool_call", "verdict"]


class SummaryRow(TypedDict):
    """A ``run_summary`` row as the database returns it."""

    run_id: str
    events: int
    tool_calls: int
    dead_letters: int
    verdicts: int
    pass_verdicts: int
    reject_verdicts: int
    fallback_verdicts: int
    first_source_timestamp: int | None
    last_source_timestamp: int | None
    last_applied_at: Any
    """A ``datetime`` from PostgreSQL, ISO 8601 text from SQLite."""


@dataclass(frozen=True)
class StoredEntry:
    """A ledger entry as the audit store holds it: the first one of its key the ``ledger`` topic carried."""

    tool_call_id: str
    entry: LedgerEntry
    """The entry as stored (the ``ledger`` topic value, parsed; key order kept)."""
    later_differs: bool
    """Whether the topic later carried a different entry for the same key (not stored: the first wins)."""
    where: str
    """The ``ledger`` record it came from, ``topic[partition]@offset``."""


@dataclass(frozen=True, slots=True)
class DraftRead:
    """Where the audit sink read a draft from ``diagnosis-drafts``: its own consumer record's position,
    not anything the draft or a verdict says (the ``draft_record`` row of its SHA-256, the first stored)."""

    topic: str
    partition: int
    offset: int


def skipped(event_id: object, exc: Exception) -> None:
    """Log one audit record that no retry can store, skipped; the rest of its batch is stored."""
    log.warning(
        "audit record %s cannot be stored, skipped: %s: %s", str(event_id)[:200], type(exc).__name__, exc
    )


@dataclass
class ApplyStats:
    """What an :class:`AuditStore` has seen since it was opened."""

    seen: int = 0
    inserted: int = 0
    malformed: int = 0
    evidence: int = 0
    """Evidence rows (entries, verdicts, drafts, reports) handed to :meth:`AuditStore.apply`, new or not."""

    @property
    def replays(self) -> int:
        """Records dropped because their ``event_id`` was already stored."""
        return self.seen - self.inserted - self.malformed


_TOOL_CALL_ROW = tuple(ToolCallRow.__annotations__)
_VERDICT_ROW = tuple(VerdictRow.__annotations__)


def _verdict_figures(record: AuditRecord) -> Mapping[str, object]:
    """The figures of a guard's or a semantic review's record (``guard_verdict``'s columns); of any other
    station's, none."""
    if record["station"] == Station.GUARD or record["station"] == Station.SEMANTIC:
        return record["fields"]
    return {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _stamp(value: Any) -> str | None:
    """A stored time as the ISO 8601 text SQLite keeps (UTC, milliseconds)."""
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat(timespec="milliseconds")
    return None if value is None or value == "" else str(value)


def _flag(value: object) -> bool | None:
    return None if value is None else bool(value)


def _json_list(value: Any) -> list[Any]:
    """A JSON list column: text in SQLite, already parsed from ``jsonb`` in PostgreSQL."""
    parsed = codec.loads(value) if isinstance(value, str | bytes) else value
    return parsed if isinstance(parsed, list) else []


def _json_or_text(value: Any) -> Any:
    """A figure stored as JSON text (an object, say) parsed back; a plain string stays as it is."""
    if not isinstance(value, str):
        return value
    try:
        return codec.loads(value)
    except codec.JSONDecodeError:
        return value


class AuditStore(ABC):
    """The audit tables in one database; one writer (the sink), any number of readers.

    :meth:`apply` stores a batch in one transaction, committed before it returns, so the sink can
    commit its Kafka offsets after it (a crash in between only replays the batch, which dedupes).
    """

    backend: ClassVar[str]
    """``sqlite`` or ``postgresql``."""

    def __init__(self, where: str, *, readonly: bool, versions: Sequence[int]) -> None:
        self.where = where
        """The database as it may be printed (a path, or a DSN without its password)."""
        self.readonly = readonly
        self.versions = list(versions)
        """The schema versions the database has (after migrating, for the writer)."""
        self.stats = ApplyStats()

    # --- writing -----------------------------------------------------------------------------------

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

    def apply(self, records: Sequence[AuditRecord], evidence: Evidence | None = None) -> int:
        """Store the records whose ``event_id`` is new, and ``evidence`` (ledger entries, verdicts,
        drafts, reports: :mod:`streams.audit.evidence`), all in one transaction; returns how many records.

        A record seen before changes nothing. A record that cannot be stored (malformed, or with a
        value the database cannot hold, such as an integer beyond 64 bits) is logged, counted as
        malformed and skipped; the rest of the batch is stored. Evidence rows already stored change
        nothing (the first ledger entry of a key wins); how many were new is in ``stats.evidence``.

        Raises:
            AuditStoreBusy: the database is busy, unreachable or the disk failed; nothing was stored.
            ConfigurationError: the store was opened read-only.
        """
        if self.readonly:
            raise ConfigurationError(f"{self.where} was opened read-only; only the audit sink writes to it")
        now = datetime.now(UTC)
        applied_at = now.replace(microsecond=now.microsecond // 1000 * 1000)
        rows: list[EventRow] = []
        malformed = 0
        for candidate in records:
            try:
                record = check_record(candidate)
            except MalformedAudit as exc:
                malformed += 1
                log.warning("malformed audit record skipped: %s", exc)
                continue
            try:
                rows.append(self._row(self._storable(record), applied_at))
            except Unstorable as exc:
                malformed += 1
                skipped(record["event_id"], exc)
        evidence = evidence if evidence else None  # the writer migrated: it has the evidence tables
        inserted, unstorable = self._write(rows, evidence) if rows or evidence else (0, 0)
        if evidence is not None:
            self.stats.evidence += len(evidence)
        self.stats.seen += len(records)
        self.stats.inserted += inserted
        self.stats.malformed += malformed + unstorable
        return inserted

    def _storable(self, record: AuditRecord) -> AuditRecord:
        """The record as this database can hold it (PostgreSQL replaces NUL characters)."""
        return record

    @staticmethod
    def _row(record: AuditRecord, applied_at: datetime) -> EventRow:
        """The values of one record for the three tables (each backend takes what it needs).

        The figures are read tolerantly: a record of an older worker may lack one (null), and only a
        guard's or a semantic review's record fills the verdict columns.

        Raises:
            Unstorable: an integer beyond 64 bits, or fields JSON cannot hold.
        """
        origin = read_origin(record["origin"])
        source = record["source"]
        verdict = _verdict_figures(record)
        tiebreak = 0
        if record["station"] == Station.DEAD_LETTER:  # which station refused: the chain's order breaks ties
            tiebreak = _CHAIN_RANK.get(str(record["fields"].get("station")), 0)
        attempt = verdict.get("attempt")
        try:
            fields_json = codec.dumps(record["fields"]).decode()
            codes_json = codec.dumps(verdict.get("violation_codes") or []).decode()
            cited_json = codec.dumps(verdict.get("cited_tool_call_ids") or []).decode()
        except codec.JSONEncodeError as exc:
            raise Unstorable(f"{type(exc).__name__}: {exc}") from exc
        row: EventRow = {
            "event_id": cast(str, record["event_id"]),  # check_record: a non-empty string
            "run_id": record["run_id"],
            "tool_call_id": record["tool_call_id"],
            "station": record["station"],
            "origin_topic": origin["topic"] if origin else None,
            "origin_partition": origin["partition"] if origin else None,
            "origin_offset": origin["offset"] if origin else None,
            "source_topic": source["topic"],
            "source_partition": source["partition"],
            "source_offset": source["offset"],
            "source_timestamp": record["source_timestamp"],
            "processed_at": record["processed_at"],
            "fields": fields_json,
            "applied_at": applied_at,
            "tiebreak": tiebreak,
            "draft_id": _text(verdict.get("draft_id")),
            "attempt": attempt if _is_int(attempt) else None,
            "verdict": _text(verdict.get("verdict")),
            "violation_codes": codes_json,
            "cited_tool_call_ids": cited_json,
            # one verdict row per draft: the guard's, or, for a draft the guard handed to the semantic
            # review in enforce mode (SPEC 4.4), the semantic station's, which gave the verdict
            "is_verdict": (record["station"] == Station.GUARD and verdict.get("semantic") != "enforce")
            or (record["station"] == Station.SEMANTIC and verdict.get("verdict") is not None),
            "is_station": record["station"] != Station.GUARD
            and record["run_id"] is not None
            and record["tool_call_id"] is not None,
        }
        for name in _INT_COLUMNS:
            value = row[name]  # type: ignore[literal-required]
            if value is not None and value not in _INT64:
                raise Unstorable(f"{name} {str(value)[:40]} does not fit a 64-bit integer")
        return row

    @abstractmethod
    def _write(self, rows: Sequence[EventRow], evidence: Evidence | None) -> tuple[int, int]:
        """Store ``rows`` and ``evidence`` in one transaction and commit; returns (new events, rows that
        could not be stored).

        Raises:
            AuditStoreBusy: nothing was stored; retry.
        """

    # --- reading -----------------------------------------------------------------------------------

    @abstractmethod
    def close(self) -> None:
        """Close the connection."""

    @abstractmethod
    def counts(self) -> dict[str, int]:
        """Rows per table: ``events``, ``tool_calls`` (distinct run/tool call pairs), ``verdicts``."""

    @abstractmethod
    def event_ids(self) -> set[str]:
        """Every stored ``event_id`` (for checks and tests)."""

    @abstractmethod
    def _trail_rows(self, run_id: str) -> list[TrailRow]:
        """The ``tool_invocation`` rows of one run, ordered by kind, origin, tool call, event id."""

    @abstractmethod
    def _summary_rows(self, limit: int, offset: int = 0) -> tuple[list[SummaryRow], int, int]:
        """The newest ``limit`` rows of ``run_summary`` after ``offset``, the number of runs, and verdicts
        without a run id."""

    @abstractmethod
    def _guard_fields(self, run_id: str) -> list[tuple[str, str]]:
        """``(event_id, fields as JSON text)`` of every guard audit record of one run."""

    @abstractmethod
    def _select(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Rows of one query written with ``?`` placeholders, as dicts (each backend its own driver)."""

    def _has_evidence(self) -> bool:
        return max(self.versions, default=0) >= EVIDENCE_VERSION

    def _has_reports(self) -> bool:
        return max(self.versions, default=0) >= REPORTS_VERSION

    def evidence_counts(self) -> dict[str, int]:
        """Rows of the evidence tables: ``entries``, ``verdicts``, ``drafts`` (zeros before version 3) and
        ``reports`` (zero before version 4)."""
        if not self._has_evidence():
            return {"entries": 0, "verdicts": 0, "drafts": 0, "reports": 0}
        (one,) = self._select(
            "SELECT (SELECT count(*) FROM ledger_entry) AS entries, "
            "(SELECT count(*) FROM verdict_record) AS verdicts, (SELECT count(*) FROM draft_record) AS drafts"
        )
        counts = {name: int(value) for name, value in one.items()}
        reports = self._select("SELECT count(*) AS n FROM report_record") if self._has_reports() else []
        return counts | {"reports": int(reports[0]["n"]) if reports else 0}

    def ledger_entries(self, run_id: str) -> list[StoredEntry]:
        """The run's stored ledger entries, in the order of their origin (``raw-hits``) records."""
        if not self._has_evidence():
            return []
        rows = self._select(
            "SELECT tool_call_id, entry, later_differs, ledger_topic, ledger_partition, ledger_offset "
            "FROM ledger_entry WHERE run_id = ? "
            "ORDER BY origin_partition, origin_offset, tool_call_id",
            (run_id,),
        )
        return [
            StoredEntry(
                tool_call_id=row["tool_call_id"],
                entry=cast(LedgerEntry, codec.loads(row["entry"])),  # the ledger topic's value, as carried
                later_differs=bool(row["later_differs"]),
                where=f"{row['ledger_topic']}[{row['ledger_partition']}]@{row['ledger_offset']}",
            )
            for row in rows
        ]

    def stored_verdicts(self, run_id: str, draft_id: str | None = None) -> list[Verdict]:
        """The run's verdicts as the topic carried them (of one draft when ``draft_id`` is given), oldest
        first: by attempt, then by the draft record's position."""
        return cast(list[Verdict], self._documents("verdict_record", EVIDENCE_VERSION, run_id, draft_id))

    def stored_reports(self, run_id: str, draft_id: str | None = None) -> list[ReportEvent]:
        """The run's published reports as the ``reports`` topic carried them (of one draft when
        ``draft_id`` is given), in the order of their verdicts: by attempt, then the draft's position."""
        return cast(list[ReportEvent], self._documents("report_record", REPORTS_VERSION, run_id, draft_id))

    def stored_judgements(self, run_id: str, draft_id: str | None = None) -> list[JudgementEvent]:
        """The run's semantic judgements as the ``judgements`` topic carried them (of one draft when
        ``draft_id`` is given), in the order of their drafts: by attempt, then the draft's position; none
        before schema version 5."""
        return cast(
            list[JudgementEvent], self._documents("judgement_record", JUDGEMENTS_VERSION, run_id, draft_id)
        )

    def _documents(self, table: str, since: int, run_id: str, draft_id: str | None) -> list[Any]:
        """The ``document`` of each row of ``table`` of the run (of one draft when ``draft_id`` is given),
        by attempt, then the draft record's position; none before schema version ``since``."""
        if max(self.versions, default=0) < since:
            return []
        rows = self._select(
            f"SELECT document FROM {table} "  # noqa: S608 - one of this module's table names, never input
            "WHERE run_id = ? AND (CAST(? AS TEXT) IS NULL OR draft_id = ?) "
            "ORDER BY attempt, origin_partition, origin_offset, event_id",
            (run_id, draft_id, draft_id),
        )
        return [codec.loads(row["document"]) for row in rows]

    def station_records(self, run_id: str) -> list[StationRecord]:
        """Every postprocess, project and ledger audit record of the run (not only the latest per tool
        call): ``tool_call_id``, ``station``, the origin's ``origin_topic/partition/offset`` and ``fields``,
        in origin order, so a reader can tell the write the ledger kept from one it refused."""
        rows = self._select(
            "SELECT tool_call_id, station, origin_topic, origin_partition, origin_offset, fields "
            "FROM audit_events WHERE run_id = ? AND station IN ('postprocess', 'project', 'ledger') "
            "AND tool_call_id IS NOT NULL ORDER BY origin_partition, origin_offset, event_id",
            (run_id,),
        )
        out: list[StationRecord] = []
        for row in rows:
            fields = _json_or_text(row["fields"])
            out.append(cast(StationRecord, row | {"fields": fields if isinstance(fields, dict) else {}}))
        return out

    def drafts_read(self, run_id: str) -> dict[str, DraftRead]:
        """Where the sink read each of the run's stored drafts, by their SHA-256 (a verdict's signed
        ``draft_sha256``): the first record of those bytes it stored."""
        if not self._has_evidence():
            return {}
        rows = self._select(
            "SELECT draft_sha256, origin_topic, origin_partition, origin_offset FROM draft_record "
            "WHERE run_id = ?",
            (run_id,),
        )
        return {
            row["draft_sha256"]: DraftRead(
                row["origin_topic"], int(row["origin_partition"]), int(row["origin_offset"])
            )
            for row in rows
        }

    def stored_drafts(self, run_id: str) -> dict[str, bytes]:
        """The run's stored drafts by their SHA-256 (a verdict's ``draft_sha256``)."""
        if not self._has_evidence():
            return {}
        rows = self._select("SELECT draft_sha256, value FROM draft_record WHERE run_id = ?", (run_id,))
        return {row["draft_sha256"]: bytes(row["value"]) for row in rows}

    def run_trail(self, run_id: str) -> tuple[list[ToolCallRow], list[VerdictRow]]:
        """The ``tool_invocation`` rows of one run: tool calls (in origin order) and verdicts."""
        tool_calls: list[ToolCallRow] = []
        verdicts: list[VerdictRow] = []
        for item in self._trail_rows(run_id):
            item["updated_at"] = _stamp(item["updated_at"])
            columns: Mapping[str, object] = item
            if item["kind"] == "tool_call":
                item["low_quality"] = _flag(item["low_quality"])  # SQLite: 0 or 1
                item["truncated"] = _flag(item["truncated"])
                item["retrieval_trace"] = _json_or_text(item["retrieval_trace"])
                tool_calls.append(cast(ToolCallRow, {k: columns[k] for k in _TOOL_CALL_ROW}))
            else:
                item["violation_codes"] = _json_list(item["violation_codes"])
                item["cited_tool_call_ids"] = _json_list(item["cited_tool_call_ids"])
                verdicts.append(cast(VerdictRow, {k: columns[k] for k in _VERDICT_ROW}))
        return tool_calls, verdicts

    def run_overview(self, limit: int = 500, offset: int = 0) -> RunOverview:
        """The newest ``limit`` runs (by the latest origin timestamp of any of their records) with counts,
        after the first ``offset`` of them (a page of the run list).

        Raises:
            ConfigurationError: the database predates the ``run_summary`` view (schema version 2).
        """
        if max(self.versions, default=0) < 2:
            raise ConfigurationError(
                f"the audit database {self.where} is at schema version {max(self.versions, default=0)}; "
                "the run list needs version 2: start `evidence-chain audit-sink` once, it migrates at start"
            )
        rows, total, orphans = self._summary_rows(limit, offset)
        runs: list[RunSummary] = [
            {
                "run_id": row["run_id"],
                "tool_calls": int(row["tool_calls"]),
                "dead_letters": int(row["dead_letters"]),
                "verdicts": {
                    "PASS": int(row["pass_verdicts"]),
                    "REJECT": int(row["reject_verdicts"]),
                    "FALLBACK": int(row["fallback_verdicts"]),
                },
                "verdict_count": int(row["verdicts"]),
                "events": int(row["events"]),
                "first_source_timestamp": row["first_source_timestamp"],
                "last_source_timestamp": row["last_source_timestamp"],
                "last_applied_at": _stamp(row["last_applied_at"]),
            }
            for row in rows
        ]
        return {"runs": runs, "run_count": total, "offset": offset, "verdicts_without_run_id": orphans}

    def violation_details(self, run_id: str) -> dict[str, list[ViolationLink]]:
        """Per guard ``event_id`` of the run, its violations with the tool calls each concerns, when the
        audit record carries them (``fields.violations``: ``[{code, path, tool_call_ids}]``).

        Records that carry only ``violation_codes`` (SPEC 5) have no entry here.
        """
        details: dict[str, list[ViolationLink]] = {}
        for event, text in self._guard_fields(run_id):
            fields = _json_or_text(text)
            listed = fields.get("violations") if isinstance(fields, dict) else None
            if not isinstance(listed, list):
                continue
            details[event] = [
                {
                    "code": item["code"],
                    "path": _text(item.get("path")) or "",
                    "tool_call_ids": [t for t in item.get("tool_call_ids") or [] if isinstance(t, str)],
                }
                for item in listed
                if isinstance(item, dict) and isinstance(item.get("code"), str)
            ]
        return details


def target_of(settings: Settings) -> str:
    """The database the settings name: ``EC_AUDIT_DSN`` when set, else ``EC_AUDIT_DB`` (a secret inside)."""
    if settings.audit_dsn is not None:
        return settings.audit_dsn.get_secret_value()
    return settings.audit_db


def describe(settings: Settings) -> str:
    """The audit database as it may be printed: the SQLite path, or the DSN without its password."""
    if settings.audit_dsn is not None:
        return redact_url(settings.audit_dsn.get_secret_value())
    return settings.audit_db
