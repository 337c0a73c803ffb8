"""Station 2: score, order, govern and grade the hits (SPEC 3.2)."""

from __future__ import annotations

from models.limits import PostprocessSettings
from models.lookup import EvidenceBlock, EvidencePostprocessResult, RerankTraceItem
from models.rag import KnowledgeSearchHit
from models.vocab import COMPLETENESS_HINTS, RelevanceLevel


def clamp_score(score: float) -> float:
    """The rerank score passes straight through, clamped to [0, 1]."""
    return min(max(float(score), 0.0), 1.0)


def grade(top_similarity: float | None, settings: PostprocessSettings) -> RelevanceLevel | None:
    """The level of the best-ranked block's score; None below the reference threshold."""
    if top_similarity is None:
        return None
    if top_similarity >= settings.precise_threshold:
        return RelevanceLevel.PRECISE
    if top_similarity >= settings.reference_threshold:
        return RelevanceLevel.REFERENCE
    return None


def _dedupe(ordered: list[KnowledgeSearchHit]) -> list[EvidenceBlock]:
    """Merge repeats of an evidence key into its first occurrence (place, content, score kept)."""
    blocks: dict[str, EvidenceBlock] = {}
    for hit in ordered:
        block = blocks.get(hit["evidence_key"])
        if block is None:
            blocks[hit["evidence_key"]] = {
                "evidence_key": hit["evidence_key"],
                "doc_id": hit["doc_id"],
                "chunk_index": hit["chunk_index"],
                "source": hit["source"],
                "title": hit["title"],
                "breadcrumb": hit["breadcrumb"],
                "content": hit["content"],
                "quality_score": clamp_score(hit["score"]),
                "original_rank": hit["original_rank"],
                "hit_reasons": list(hit["hit_reasons"]),
            }
            continue
        reasons = block["hit_reasons"]
        for reason in hit["hit_reasons"]:
            if reason not in reasons:
                reasons.append(reason)
    return list(blocks.values())


def _cap(blocks: list[EvidenceBlock], settings: PostprocessSettings) -> list[EvidenceBlock]:
    """At most ``max_chunks_per_doc`` blocks per document, then ``return_n`` in all."""
    per_doc: dict[str, int] = {}
    kept: list[EvidenceBlock] = []
    for block in blocks:
        if len(kept) >= settings.return_n:
            break
        seen = per_doc.get(block["doc_id"], 0)
        if seen >= settings.max_chunks_per_doc:
            continue
        per_doc[block["doc_id"]] = seen + 1
        kept.append(block)
    return kept


def postprocess(hits: list[KnowledgeSearchHit], settings: PostprocessSettings) -> EvidencePostprocessResult:
    """Dedupe, cap and grade the hits.

    The order is by ``original_rank`` only: the rerank score is not calibrated, so it grades the
    result but never reorders it (a model would read reordering as confidence it does not have).
    """
    ordered = sorted(hits, key=lambda hit: hit["original_rank"])
    blocks = _cap(_dedupe(ordered), settings)
    top = blocks[0]["quality_score"] if blocks else None
    level = grade(top, settings)
    trace: list[RerankTraceItem] = [
        {"final_rank": rank, "source": b["source"], "score": b["quality_score"], "reasons": b["hit_reasons"]}
        for rank, b in enumerate(blocks, start=1)
    ]
    return {
        "candidate_count": len(hits),
        "evidence_block_count": len(blocks),
        "top_similarity": top,
        "relevance_level": level,
        "completeness_hint": COMPLETENESS_HINTS[level],
        "low_quality": top is None or top < settings.reference_threshold,
        "evidence_blocks": blocks,
        "rerank_trace": trace,
    }
