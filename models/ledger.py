"""The write-once ledger entry (Redis hash) and the ``ledger`` topic value (SPEC 3.6)."""

from __future__ import annotations

from pydantic import TypeAdapter
from typing_extensions import TypedDict

from models.events import Origin
from models.vocab import DeadLetterReason, EvidenceStatus, LedgerStatus


class LedgerEntry(TypedDict):
    """What the agent was shown for one ``(run_id, tool_call_id)``, exactly as stored."""

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


LEDGER_ENTRY_FIELDS: tuple[str, ...] = tuple(LedgerEntry.__annotations__)
LEDGER_ENTRY_ADAPTER: TypeAdapter[LedgerEntry] = TypeAdapter(LedgerEntry)
