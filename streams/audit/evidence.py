"""The evidence the audit sink keeps besides the audit records: ledger entries, verdicts, drafts, reports
and the semantic review's judgements.

The sink reads the ``ledger``, ``verdicts``, ``diagnosis-drafts`` and ``reports`` topics too
(``AUDIT_SINK_INPUTS`` in :mod:`models.topology`) and stores each value as the topic carried it (schema
versions 3 and 4, the tables of :mod:`streams.audit.tables`), so the run page and ``receipt`` work after
the Redis entries expire, and without Redis. This module turns topic records into rows; no I/O.

- a ledger entry: keyed ``(run_id, tool_call_id)``, the first stored wins (what the agent was shown);
- a verdict: keyed by its ``event_id`` (a re-delivered verdict repeats it), every attempt kept;
- a draft: keyed by the SHA-256 of its exact bytes (the verdict's ``draft_sha256``); only a draft the
  guard parses (at most ``max_draft_bytes``, a JSON object) is kept, so the store stays bounded;
- a published report: keyed by its ``event_id``, like a verdict (a re-delivered report repeats it);
- a judgement of the semantic review (schema version 5): keyed by its ``event_id`` likewise.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypeVar

from typing_extensions import TypedDict

from streams import codec
from streams.envelope import read_origin
from streams.errors import MalformedAudit
from streams.hashing import sha256_hex

log = logging.getLogger(__name__)

_INT64 = range(-(2**63), 2**63)


@dataclass(frozen=True, slots=True)
class TopicValue:
    """One consumed record of an evidence topic: where it was, and its value."""

    topic: str
    partition: int
    offset: int
    value: bytes | None

    @property
    def where(self) -> str:
        return f"{self.topic}[{self.partition}]@{self.offset}"


class OriginColumns(TypedDict):
    """Where a document's chain started (its ``origin``), as every evidence table keeps it."""

    origin_topic: str | None
    origin_partition: int | None
    origin_offset: int | None
    source_timestamp: int | None


class EntryRow(OriginColumns):
    """A ``ledger_entry`` row (:data:`streams.audit.tables.LEDGER_ENTRY`)."""

    run_id: str
    tool_call_id: str
    status: str | None
    projection_sha256: str | None
    key_id: str | None
    event_id: str | None
    ledger_topic: str
    ledger_partition: int
    ledger_offset: int
    entry: str
    applied_at: datetime


class _Judged(OriginColumns):
    """What every table of a draft's verdicts, reports and judgements keeps of a document."""

    event_id: str
    run_id: str | None
    draft_id: str | None
    attempt: int | None
    draft_sha256: str | None
    document: str
    applied_at: datetime


class VerdictDocumentRow(_Judged):
    """A ``verdict_record`` row (:data:`streams.audit.tables.VERDICT_RECORD`)."""

    verdict: str | None


class ReportDocumentRow(_Judged):
    """A ``report_record`` row (:data:`streams.audit.tables.REPORT_RECORD`)."""

    verdict: str | None
    verdict_event_id: str | None


class JudgementDocumentRow(_Judged):
    """A ``judgement_record`` row (:data:`streams.audit.tables.JUDGEMENT_RECORD`)."""

    verdict_event_id: str | None


class DraftRow(TypedDict):
    """A ``draft_record`` row (:data:`streams.audit.tables.DRAFT_RECORD`)."""

    draft_sha256: str
    run_id: str | None
    draft_id: str | None
    origin_topic: str
    origin_partition: int
    origin_offset: int
    value: bytes
    applied_at: datetime


@dataclass
class Evidence:
    """The rows of one batch for the four evidence tables, in the order they were consumed."""

    entries: list[EntryRow] = field(default_factory=list)
    verdicts: list[VerdictDocumentRow] = field(default_factory=list)
    drafts: list[DraftRow] = field(default_factory=list)
    reports: list[ReportDocumentRow] = field(default_factory=list)
    judgements: list[JudgementDocumentRow] = field(default_factory=list)
    skipped: int = 0
    """Values not kept: malformed (logged), or drafts too large or unparsable to be judged item by item."""

    def __bool__(self) -> bool:
        return bool(self.entries or self.verdicts or self.drafts or self.reports or self.judgements)

    def __len__(self) -> int:
        return (
            len(self.entries)
            + len(self.verdicts)
            + len(self.drafts)
            + len(self.reports)
            + len(self.judgements)
        )


def applied_at() -> datetime:
    """Now, in UTC, to the millisecond (what the stores keep)."""
    now = datetime.now(UTC)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


def _doc(value: bytes | None) -> tuple[Mapping[str, object], str]:
    """The value as a JSON object and as its exact text.

    Raises:
        MalformedAudit: empty, not strict UTF-8 JSON, or not an object.
    """
    if value is None:
        raise MalformedAudit("the value is empty (a tombstone)")
    try:
        doc = codec.loads(value)
        text = value.decode("utf-8")
    except (codec.JSONDecodeError, UnicodeDecodeError) as exc:
        raise MalformedAudit(f"not strict JSON: {str(exc)[:200]}") from exc
    if not isinstance(doc, dict):
        raise MalformedAudit(f"a JSON object is expected, not {type(doc).__name__}")
    return doc, text


def _int(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value in _INT64:
        return value
    return None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _origin(doc: Mapping[str, object]) -> OriginColumns:
    origin = read_origin(doc.get("origin")) if doc.get("origin") is not None else None
    return {
        "origin_topic": origin["topic"] if origin else None,
        "origin_partition": _int(origin["partition"]) if origin else None,
        "origin_offset": _int(origin["offset"]) if origin else None,
        "source_timestamp": _int(doc.get("source_timestamp")),
    }


def entry_row(record: TopicValue, applied_at: datetime) -> EntryRow:
    """A ``ledger`` topic value as a ``ledger_entry`` row (``entry``: the exact text).

    Raises:
        MalformedAudit: not a JSON object with string ``run_id`` and ``tool_call_id``.
    """
    doc, text = _doc(record.value)
    run_id, tool_call_id = doc.get("run_id"), doc.get("tool_call_id")
    if not isinstance(run_id, str) or not isinstance(tool_call_id, str):
        raise MalformedAudit("a ledger entry needs string run_id and tool_call_id")
    return {
        "run_id": run_id,
        "tool_call_id": tool_call_id,
        "status": _str(doc.get("status")),
        "projection_sha256": _str(doc.get("projection_sha256")),
        "key_id": _str(doc.get("key_id")),
        "event_id": _str(doc.get("event_id")),
        **_origin(doc),
        "ledger_topic": record.topic,
        "ledger_partition": record.partition,
        "ledger_offset": record.offset,
        "entry": text,
        "applied_at": applied_at,
    }


def verdict_row(record: TopicValue, applied_at: datetime) -> VerdictDocumentRow:
    """A ``verdicts`` topic value as a ``verdict_record`` row (``document``: the exact text).

    Raises:
        MalformedAudit: not a JSON object with a non-empty string ``event_id``.
    """
    doc, row = _judged(record, applied_at, "a verdict")
    return {**row, "verdict": _str(doc.get("verdict"))}


def report_row(record: TopicValue, applied_at: datetime) -> ReportDocumentRow:
    """A ``reports`` topic value as a ``report_record`` row (``document``: the exact text).

    Raises:
        MalformedAudit: not a JSON object with a non-empty string ``event_id``.
    """
    doc, row = _judged(record, applied_at, "a report")
    return {**row, "verdict": _str(doc.get("verdict")), "verdict_event_id": _str(doc.get("verdict_event_id"))}


def judgement_row(record: TopicValue, applied_at: datetime) -> JudgementDocumentRow:
    """A ``judgements`` topic value (SPEC 4.4) as a ``judgement_record`` row (``document``: the exact text).

    Raises:
        MalformedAudit: not a JSON object with a non-empty string ``event_id``.
    """
    doc, row = _judged(record, applied_at, "a judgement")
    return {**row, "verdict_event_id": _str(doc.get("verdict_event_id"))}


def _judged(record: TopicValue, applied_at: datetime, what: str) -> tuple[Mapping[str, object], _Judged]:
    """A document about one draft (a verdict, a report, a judgement), parsed, and what every table of
    them keeps: its ids and its exact text."""
    doc, text = _doc(record.value)
    event = doc.get("event_id")
    if not isinstance(event, str) or not event:
        raise MalformedAudit(f"{what} needs a non-empty string event_id")
    row: _Judged = {
        "event_id": event,
        "run_id": _str(doc.get("run_id")),
        "draft_id": _str(doc.get("draft_id")),
        "attempt": _int(doc.get("attempt")),
        "draft_sha256": _str(doc.get("draft_sha256")),
        **_origin(doc),
        "document": text,
        "applied_at": applied_at,
    }
    return doc, row


def draft_row(record: TopicValue, applied_at: datetime, max_draft_bytes: int) -> DraftRow | None:
    """A ``diagnosis-drafts`` value as a ``draft_record`` row, or None when the guard would not read its
    items (over ``max_draft_bytes``, or not a JSON object): its verdict says why, nothing to show."""
    value = record.value
    if value is None or len(value) > max_draft_bytes:
        return None
    try:
        doc, _ = _doc(value)
    except MalformedAudit:
        return None
    draft_id = doc.get("draft_id")
    return {
        "draft_sha256": sha256_hex(value),
        "run_id": _str(doc.get("run_id")),
        "draft_id": draft_id if isinstance(draft_id, str) and len(draft_id) <= 128 else None,
        "origin_topic": record.topic,
        "origin_partition": record.partition,
        "origin_offset": record.offset,
        "value": value,
        "applied_at": applied_at,
    }


R = TypeVar("R")


def _rows_of(
    out: Evidence,
    values: Sequence[TopicValue],
    build: Callable[[TopicValue, datetime], R],
    rows: list[R],
    applied_at: datetime,
) -> None:
    """Each value's row into ``rows``; a malformed value is logged and counted in ``out.skipped``."""
    for record in values:
        try:
            rows.append(build(record, applied_at))
        except MalformedAudit as exc:
            out.skipped += 1
            log.warning("%s: not stored: %s", record.where, exc)


def evidence_of(
    ledger: list[TopicValue],
    verdicts: list[TopicValue],
    drafts: list[TopicValue],
    applied_at: datetime,
    max_draft_bytes: int,
    reports: Sequence[TopicValue] = (),
    judgements: Sequence[TopicValue] = (),
) -> Evidence:
    """The rows of one batch; a malformed value is logged with its ``topic[partition]@offset`` and skipped."""
    out = Evidence()
    _rows_of(out, ledger, entry_row, out.entries, applied_at)
    _rows_of(out, verdicts, verdict_row, out.verdicts, applied_at)
    _rows_of(out, reports, report_row, out.reports, applied_at)
    _rows_of(out, judgements, judgement_row, out.judgements, applied_at)
    for record in drafts:
        row = draft_row(record, applied_at, max_draft_bytes)
        if row is None:
            out.skipped += 1
        else:
            out.drafts.append(row)
    return out
