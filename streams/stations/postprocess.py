"""Station 2: score, order, govern and grade the hits (SPEC 3.2)."""

from __future__ import annotations

from operator import itemgetter

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


def _block(group: list[KnowledgeSearchHit]) -> EvidenceBlock:
    """A block from every occurrence of one evidence key: the first keeps its place, content and score;
    ``hit_reasons`` become the union in first-seen order."""
    first = group[0]
    reasons = list(first["hit_reasons"])
    for hit in group[1:]:
        for reason in hit["hit_reasons"]:
            if reason not in reasons:
                reasons.append(reason)
    return {
        "evidence_key": first["evidence_key"],
        "doc_id": first["doc_id"],
        "chunk_index": first["chunk_index"],
        "source": first["source"],
        "title": first["title"],
        "breadcrumb": first["breadcrumb"],
        "content": first["content"],
        "quality_score": clamp_score(first["score"]),
        "original_rank": first["original_rank"],
        "hit_reasons": reasons,
    }


def govern(ordered: list[KnowledgeSearchHit], settings: PostprocessSettings) -> list[EvidenceBlock]:
    """Dedupe by evidence key, then at most ``max_chunks_per_doc`` blocks per document, then ``return_n``.

    One walk gives the same result as the three passes in order: a merged repeat never changes its
    first occurrence's place, so grouping first and capping the groups is equivalent; only the blocks
    that survive are built.
    """
    groups: dict[str, list[KnowledgeSearchHit]] = {}
    for hit in ordered:
        group = groups.get(hit["evidence_key"])
        if group is None:
            groups[hit["evidence_key"]] = [hit]
        else:
            group.append(hit)
    per_doc: dict[str, int] = {}
    kept: list[EvidenceBlock] = []
    for group in groups.values():
        if len(kept) >= settings.return_n:
            break
        doc_id = group[0]["doc_id"]
        seen = per_doc.get(doc_id, 0)
        if seen >= settings.max_chunks_per_doc:
            continue
        per_doc[doc_id] = seen + 1
        kept.append(_block(group))
    return kept


def postprocess(hits: list[KnowledgeSearchHit], settings: PostprocessSettings) -> EvidencePostprocessResult:
    """Dedupe, cap and grade the hits.

    The order is by ``original_rank`` only: the rerank score is not calibrated, so it grades the
    result but never reorders it (a model would read reordering as confidence it does not have).
    """
    ordered = sorted(hits, key=itemgetter("original_rank"))
    blocks = govern(ordered, settings)
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
