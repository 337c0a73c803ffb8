"""Station 4: assemble the LookupResult, the internal truth of one lookup (SPEC 3.4)."""

from __future__ import annotations

from models.events import Origin
from models.lookup import ContextPack, EvidencePostprocessResult, FailedLookup, LookupResult
from models.rag import RawHitsRecord
from models.vocab import FALLBACK_MESSAGE, DeadLetterReason, RecordStatus


def assemble(
    record: RawHitsRecord,
    result: EvidencePostprocessResult,
    context_pack: ContextPack,
    *,
    event_id: str | None = None,
    origin: Origin | None = None,
) -> LookupResult:
    """Join the postprocess result, the context pack and py-rag's retrieval trace.

    Only ``found`` and ``fallback_message`` are computed here; the rest is carried over.
    """
    found = result["evidence_block_count"] > 0
    response = record["response"]
    return {
        "run_id": record["run_id"],
        "tool_call_id": record["tool_call_id"],
        "event_id": event_id,
        "origin": origin,
        "source_timestamp": origin["timestamp"] if origin is not None else None,
        "status": RecordStatus.OK,
        "failure_reason": None,
        "query": response["query"],
        "found": found,
        "fallback_message": None if found else FALLBACK_MESSAGE,
        "candidate_count": result["candidate_count"],
        "evidence_block_count": result["evidence_block_count"],
        "top_similarity": result["top_similarity"],
        "relevance_level": result["relevance_level"],
        "completeness_hint": result["completeness_hint"],
        "low_quality": result["low_quality"],
        "evidence_blocks": result["evidence_blocks"],
        "rerank_trace": result["rerank_trace"],
        "context_pack": context_pack,
        "retrieval_trace": response.get("retrieval_trace"),
    }


def failed_lookup(
    run_id: str,
    tool_call_id: str,
    reason: DeadLetterReason,
    *,
    event_id: str | None = None,
    origin: Origin | None = None,
) -> FailedLookup:
    """The value a rejected record with valid ids travels on with, so the ledger records it FAILED."""
    return {
        "run_id": run_id,
        "tool_call_id": tool_call_id,
        "event_id": event_id,
        "origin": origin,
        "source_timestamp": origin["timestamp"] if origin is not None else None,
        "status": RecordStatus.FAILED,
        "failure_reason": reason,
    }
