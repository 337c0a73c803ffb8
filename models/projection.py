"""The frozen agent-facing contract, RagToolResult, and the ``projected`` topic value (SPEC 3.5)."""

from __future__ import annotations

from pydantic import ConfigDict, TypeAdapter, with_config
from typing_extensions import TypedDict

from models.events import Origin
from models.vocab import DeadLetterReason, EvidenceStatus, RecordStatus, RelevanceLevel


@with_config(ConfigDict(extra="forbid", strict=True))
class EvidenceItem(TypedDict):
    """One piece of evidence as the agent sees it; ``document_id`` is its citation coordinate."""

    document_id: str
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
    returned_count: int
    relevance_level: RelevanceLevel | None
    truncated: bool


RAG_TOOL_RESULT_FIELDS: tuple[str, ...] = tuple(RagToolResult.__annotations__)
EVIDENCE_ITEM_FIELDS: tuple[str, ...] = tuple(EvidenceItem.__annotations__)


class ProjectedEvent(TypedDict):
    """The ``projected`` topic value: the canonical projection as a string and its SHA-256."""

    run_id: str | None
    tool_call_id: str | None
    event_id: str | None
    origin: Origin | None
    source_timestamp: int | None
    status: RecordStatus
    failure_reason: DeadLetterReason | None
    projection: str | None
    projection_sha256: str | None


RAG_TOOL_RESULT_ADAPTER: TypeAdapter[RagToolResult] = TypeAdapter(RagToolResult)
PROJECTED_EVENT_ADAPTER: TypeAdapter[ProjectedEvent] = TypeAdapter(ProjectedEvent)
