"""Envelope shapes shared by every topic: origin, source coordinates, audit, dead letters."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import TypeAdapter
from typing_extensions import TypedDict

from models.vocab import DeadLetterReason, Station


class Origin(TypedDict):
    """The raw-hits or diagnosis-drafts record that started a chain, carried unchanged."""

    topic: str
    partition: int
    offset: int
    timestamp: int | None


class SourceRef(TypedDict):
    """The record one station consumed."""

    topic: str
    partition: int
    offset: int


class DeadLetterSource(TypedDict):
    """Coordinates of a dead-lettered record in its own topic."""

    topic: str | None
    partition: int | None
    offset: int | None
    timestamp: int | None


class Rejection(TypedDict):
    """Why a station refused its input: the core of a dead letter, and what ``pipe`` prints."""

    reason: DeadLetterReason
    error: str
    run_id: str | None
    tool_call_id: str | None


class DeadLetter(TypedDict):
    """A record that could not be processed, with its original bytes (SPEC 5)."""

    event_id: str | None
    origin: Origin | None
    station: Station
    reason: DeadLetterReason
    error: str
    run_id: str | None
    tool_call_id: str | None
    source: DeadLetterSource
    key: str | None
    value: str
    value_encoding: Literal["utf-8", "base64"]
    value_bytes: int
    value_sha256: str


class AuditRecord(TypedDict):
    """One record per station per input; ``processed_at`` is the only wall-clock field anywhere."""

    event_id: str | None
    run_id: str | None
    tool_call_id: str | None
    station: Station
    origin: Origin | None
    source: SourceRef
    source_timestamp: int | None
    processed_at: str
    fields: dict[str, Any]


ORIGIN_ADAPTER: TypeAdapter[Origin] = TypeAdapter(Origin)
DEAD_LETTER_ADAPTER: TypeAdapter[DeadLetter] = TypeAdapter(DeadLetter)
AUDIT_ADAPTER: TypeAdapter[AuditRecord] = TypeAdapter(AuditRecord)
