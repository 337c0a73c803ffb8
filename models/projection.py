"""The frozen agent-facing contract, RagToolResult, and the ``projected`` topic value (SPEC 3.5)."""

from __future__ import annotations

from typing import Annotated

from pydantic import ConfigDict, Field, TypeAdapter, with_config
from typing_extensions import TypedDict

from models.events import ChainOrigin, EventId, SourceTimestamp
from models.vocab import DeadLetterReason, EvidenceStatus, RecordStatus, RelevanceLevel


@with_config(ConfigDict(extra="forbid", strict=True))
class EvidenceItem(TypedDict):
    """One piece of evidence as the agent sees it; ``document_id`` is its citation coordinate."""

    document_id: Annotated[str, Field(description="The item's identity, what a draft cites.")]
    source: str | None
    title: str | None
    breadcrumb: str | None
    excerpt: str


@with_config(ConfigDict(extra="forbid", strict=True))
class RagToolResult(TypedDict):
    """Exactly what the agent is shown, keys in this order, nothing else."""

    evidence_status: EvidenceStatus
    tool_call_id: str
    query: str
    evidence: list[EvidenceItem]
    returned_count: Annotated[int, Field(description="Number of evidence items.")]
    relevance_level: Annotated[
        RelevanceLevel | None, Field(description="Null without evidence or a known level.")
    ]
    truncated: Annotated[
        bool, Field(description="Something was cut or dropped to fit the item, excerpt or byte budget.")
    ]


RAG_TOOL_RESULT_FIELDS: tuple[str, ...] = tuple(RagToolResult.__annotations__)
EVIDENCE_ITEM_FIELDS: tuple[str, ...] = tuple(EvidenceItem.__annotations__)


class ProjectedEvent(TypedDict):
    """The ``projected`` topic value: the canonical projection as a string and its SHA-256."""

    run_id: str | None
    tool_call_id: str | None
    event_id: EventId
    origin: ChainOrigin
    source_timestamp: SourceTimestamp
    status: Annotated[
        RecordStatus, Field(description="FAILED: the input was rejected or the projection failed closed.")
    ]
    failure_reason: Annotated[DeadLetterReason | None, Field(description="Null when status is OK.")]
    projection: Annotated[
        str | None,
        Field(
            description="The RagToolResult's canonical bytes (compact UTF-8 JSON, keys in contract order) "
            "as a string: exactly what the agent is shown and the ledger stores. Null when FAILED."
        ),
    ]
    projection_sha256: Annotated[
        str | None, Field(description="Lowercase hex SHA-256 of projection's UTF-8 bytes; null when FAILED.")
    ]


RAG_TOOL_RESULT_ADAPTER: TypeAdapter[RagToolResult] = TypeAdapter(RagToolResult)
PROJECTED_EVENT_ADAPTER: TypeAdapter[ProjectedEvent] = TypeAdapter(ProjectedEvent)
