"""Station 5: project a LookupResult, read as JSON text, into the frozen RagToolResult (SPEC 3.5).

The projector reads text, not a typed object, so the internal shape can change without touching
the frozen output; it is a tolerant reader that accepts camelCase aliases.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from models.limits import ToolProjectionLimits
from models.projection import EvidenceItem, RagToolResult
from models.vocab import EvidenceStatus, RelevanceLevel
from streams import codec
from streams.codec import JSONObject
from streams.errors import ProjectionBudgetExceeded
from streams.hashing import sha256_hex

_LEVELS = {"PRECISE": RelevanceLevel.PRECISE, "REFERENCE": RelevanceLevel.REFERENCE}


@dataclass(frozen=True, slots=True)
class Projection:
    """A projection that fits: the result, its canonical bytes and their SHA-256."""

    result: RagToolResult
    canonical: bytes
    sha256: str


def canonical_projection(result: RagToolResult) -> bytes:
    """The canonical bytes of a projection: what the agent is shown, the ledger stores and is hashed.

    The only function that produces them.
    """
    return codec.dumps(result)


def pick(obj: JSONObject, snake: str, camel: str) -> Any:
    """The first non-null of an alias pair, snake_case first."""
    value = obj.get(snake)
    return obj.get(camel) if value is None else value


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _non_blank(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def identity(block: JSONObject, position: int) -> str:
    """The item's identity: the first non-blank of evidence_key, document_id,
    ``<doc_id>#chunk-<chunk_index>`` (both present), ``evidence-<position>`` (1-based).
    """
    key = _non_blank(pick(block, "evidence_key", "evidenceKey"))
    if key is not None:
        return key
    document_id = _non_blank(pick(block, "document_id", "documentId"))
    if document_id is not None:
        return document_id
    doc_id = _non_blank(pick(block, "doc_id", "docId"))
    index = pick(block, "chunk_index", "chunkIndex")
    if doc_id is not None and index is not None and not isinstance(index, bool):
        if isinstance(index, int) or _non_blank(index) is not None:
            return f"{doc_id}#chunk-{index}"
    return f"evidence-{position}"


def _gate(blocks: Any, limits: ToolProjectionLimits) -> tuple[list[EvidenceItem], bool]:
    """Count, identity and excerpt gates, in that order, over the blocks in input order."""
    items: list[EvidenceItem] = []
    seen: set[str] = set()
    truncated = False
    for position, raw in enumerate(blocks if isinstance(blocks, list) else [], start=1):
        if len(items) >= limits.max_items:
            truncated = True
            break
        block = raw if isinstance(raw, dict) else {}
        document_id = identity(block, position)
        if document_id in seen:
            continue
        seen.add(document_id)
        content = pick(block, "content", "excerpt")
        if not isinstance(content, str):
            content = ""
        if len(content) > limits.max_excerpt_chars:
            content = content[: limits.max_excerpt_chars]
            truncated = True
        items.append(
            {
                "document_id": document_id,
                "source": _text_or_none(block.get("source")),
                "title": _text_or_none(block.get("title")),
                "breadcrumb": _text_or_none(block.get("breadcrumb")),
                "excerpt": content,
            }
        )
    return items, truncated


def project_lookup(lookup: JSONObject, limits: ToolProjectionLimits) -> Projection:
    """Project a parsed LookupResult.

    Raises:
        ProjectionBudgetExceeded: even with no evidence the projection is over ``max_bytes``
            (it fails closed: nothing is shown rather than something broken).
    """
    tool_call_id = pick(lookup, "tool_call_id", "toolCallId")
    if not isinstance(tool_call_id, str):
        tool_call_id = ""
    query = lookup.get("query")
    if not isinstance(query, str):
        query = ""
    truncated = False
    if len(query) > limits.max_query_chars:
        query = query[: limits.max_query_chars]
        truncated = True
    evidence, cut = _gate(pick(lookup, "evidence_blocks", "evidenceBlocks"), limits)
    truncated = truncated or cut
    level: RelevanceLevel | None = None
    if evidence:
        raw_level = pick(lookup, "relevance_level", "relevanceLevel")
        # Letter case folds in ASCII only (SPEC 3.5.4): Unicode upper-casing would also turn
        # "preciſe" (LONG S) or "precıse" (DOTLESS I) into PRECISE.
        if isinstance(raw_level, str) and raw_level.isascii():
            level = _LEVELS.get(raw_level.upper())
    while True:
        result: RagToolResult = {
            "evidence_status": EvidenceStatus.EVIDENCE_FOUND if evidence else EvidenceStatus.NO_EVIDENCE,
            "tool_call_id": tool_call_id,
            "query": query,
            "evidence": evidence,
            "returned_count": len(evidence),
            "relevance_level": level if evidence else None,
            "truncated": truncated,
        }
        canonical = canonical_projection(result)
        if len(canonical) <= limits.max_bytes:
            return Projection(result, canonical, sha256_hex(canonical))
        if not evidence:
            run_id = lookup.get("run_id")
            raise ProjectionBudgetExceeded(
                f"{len(canonical)} bytes with no evidence left, over max_bytes={limits.max_bytes}",
                run_id=run_id if isinstance(run_id, str) else None,
                tool_call_id=tool_call_id,
            )
        evidence = evidence[:-1]
        truncated = True
