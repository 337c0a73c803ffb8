"""The write-once ledger entry (Redis hash) and the ``ledger`` topic value (SPEC 3.6)."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import TypeAdapter
from typing_extensions import TypedDict

from models.events import Origin
from models.vocab import DeadLetterReason, EvidenceStatus, LedgerOutcome, LedgerStatus


class LedgerEntry(TypedDict):
    """What the agent was shown for one ``(run_id, tool_call_id)``, exactly as stored.

    ``written_at`` and ``expires_at`` (epoch ms, from Redis ``TIME`` when the entry was first
    written) are set by the store, never by a station: the entry a station asks to write carries
    None there, the stored entry and the ``ledger`` event carry the store's values, so a rebuild
    can restore each entry with its true remaining lifetime.
    """

    event_id: str | None
    run_id: str
    tool_call_id: str
    status: LedgerStatus
    evidence_status: EvidenceStatus | None
    projection: str | None
    projection_sha256: str | None
    origin: Origin | None
    source_timestamp: int | None
    failure_reason: DeadLetterReason | None
    written_at: int | None
    expires_at: int | None


LEDGER_ENTRY_FIELDS: tuple[str, ...] = tuple(LedgerEntry.__annotations__)
"""Every field of an entry, in the order of the ``ledger`` topic value."""

LEDGER_ENTRY_ADAPTER: TypeAdapter[LedgerEntry] = TypeAdapter(LedgerEntry)


@dataclass(frozen=True, slots=True)
class WriteResult:
    """The outcome of one write-once attempt, the entry as stored afterwards, and its Redis key."""

    outcome: LedgerOutcome
    stored: LedgerEntry
    key: str
