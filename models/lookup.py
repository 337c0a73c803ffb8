"""The internal truth of one lookup: postprocess result, context pack, LookupResult (SPEC 3.2-3.4)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter
from typing_extensions import TypedDict

from models.events import ChainOrigin, EventId, SourceTimestamp
from models.vocab import DeadLetterReason, RecordStatus, RelevanceLevel


class EvidenceBlock(TypedDict):
    """One governed block; its place in the list is its final rank."""

    evidence_key: str
    doc_id: str
    chunk_index: int | None
    source: str
    title: str | None
    breadcrumb: str | None
    content: str
    quality_score: float
    original_rank: int
    hit_reasons: list[str]


class RerankTraceItem(TypedDict):
    """The final-order ledger of one surviving block."""

    final_rank: int
    source: str
    score: float
    reasons: list[str]


class EvidencePostprocessResult(TypedDict):
    """Deduped, capped and graded blocks."""

    candidate_count: int
    evidence_block_count: int
    top_similarity: float | None
    relevance_level: RelevanceLevel | None
    completeness_hint: str
    low_quality: bool
    evidence_blocks: list[EvidenceBlock]
    rerank_trace: list[RerankTraceItem]


class ContextPack(TypedDict):
    """A char-budgeted rendering of the blocks for people and evaluations (not what the agent sees)."""

    packed_text: str
    strategy: str
    char_budget: int
    used_chars: int
    included_sources: list[str]
    omitted_sources: list[str]


class LookupResult(TypedDict):
    """The ``postprocessed`` value of an accepted raw-hits record."""

    run_id: str
    tool_call_id: str
    event_id: EventId
    origin: ChainOrigin
    source_timestamp: SourceTimestamp
    status: Literal[RecordStatus.OK]
    failure_reason: None
    query: str
    found: Annotated[bool, Field(description="evidence_block_count > 0.")]
    fallback_message: Annotated[str | None, Field(description="Null when found.")]
    candidate_count: int
    evidence_block_count: int
    top_similarity: float | None
    relevance_level: RelevanceLevel | None
    completeness_hint: str
    low_quality: bool
    evidence_blocks: list[EvidenceBlock]
    rerank_trace: list[RerankTraceItem]
    context_pack: ContextPack
    retrieval_trace: Annotated[Any, Field(description="py-rag's retrieval_trace as received, or null.")]


class FailedLookup(TypedDict):
    """The ``postprocessed`` value of a rejected raw-hits record with valid ids: no content."""

    run_id: str
    tool_call_id: str
    event_id: EventId
    origin: ChainOrigin
    source_timestamp: SourceTimestamp
    status: Literal[RecordStatus.FAILED]
    failure_reason: Annotated[DeadLetterReason, Field(description="The reason of the record's dead letter.")]


LOOKUP_RESULT_ADAPTER: TypeAdapter[LookupResult] = TypeAdapter(LookupResult)
