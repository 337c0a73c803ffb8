"""The write-once ledger entry (Redis hash) and the ``ledger`` topic value (SPEC 3.6)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, NotRequired, cast

from pydantic import Field, TypeAdapter
from typing_extensions import TypedDict

from models.events import ChainOrigin, SourceTimestamp
from models.vocab import DeadLetterReason, EvidenceStatus, LedgerOutcome, LedgerStatus


class LedgerEntry(TypedDict):
    """What the agent was shown for one ``(run_id, tool_call_id)``, exactly as stored.

    ``written_at`` and ``expires_at`` (epoch ms, from Redis ``TIME`` when the entry was first
    written) are set by the store, never by a station: the entry a station asks to write carries
    None there, the stored entry and the ``ledger`` event carry the store's values, so a rebuild
    can restore each entry with its true remaining lifetime.
    """

    event_id: Annotated[
        str | None, Field(description="The event_id of the write that stored the entry (the first one).")
    ]
    run_id: str
    tool_call_id: str
    status: LedgerStatus
    evidence_status: Annotated[
        EvidenceStatus | None, Field(description="The projection's evidence_status; null when FAILED.")
    ]
    projection: Annotated[
        str | None,
        Field(
            description="The exact bytes the agent was shown (a RagToolResult) as a string; null when FAILED."
        ),
    ]
    projection_sha256: Annotated[
        str | None, Field(description="Lowercase hex SHA-256 of projection's UTF-8 bytes; null when FAILED.")
    ]
    origin: ChainOrigin
    source_timestamp: SourceTimestamp
    failure_reason: Annotated[DeadLetterReason | None, Field(description="Null when READY.")]
    key_id: NotRequired[
        Annotated[
            str,
            Field(
                description="Signed entries only (SPEC 3.7): the first 16 hex digits of SHA-256 over the "
                "signer's raw Ed25519 public key."
            ),
        ]
    ]
    signature: NotRequired[
        Annotated[
            str,
            Field(
                description="Signed entries only (SPEC 3.7): the Ed25519 signature, 128 lowercase hex digits."
            ),
        ]
    ]
    written_at: Annotated[
        int | None, Field(description="When the store first wrote the entry (Redis TIME, epoch ms).")
    ]
    expires_at: Annotated[int | None, Field(description="When the entry expires (epoch ms).")]


LEDGER_ENTRY_FIELDS: tuple[str, ...] = tuple(LedgerEntry.__annotations__)
"""Every field of an entry, in the order of the ``ledger`` topic value."""

SIGNATURE_FIELDS: tuple[str, ...] = ("key_id", "signature")
"""Present on a signed entry only: an unsigned entry has neither field (not even null)."""


def as_stored(source: Mapping[str, Any]) -> LedgerEntry:
    """The entry's fields in topic order (a missing one null), the signature's only when it is signed."""
    out = {
        name: source.get(name)
        for name in LEDGER_ENTRY_FIELDS
        if name not in SIGNATURE_FIELDS or source.get(name) is not None
    }
    return cast(LedgerEntry, out)


LEDGER_ENTRY_ADAPTER: TypeAdapter[LedgerEntry] = TypeAdapter(LedgerEntry)


@dataclass(frozen=True, slots=True)
class WriteResult:
    """The outcome of one write-once attempt, the entry as stored afterwards, and its Redis key."""

    outcome: LedgerOutcome
    stored: LedgerEntry
    key: str
