"""Station 3: pack the blocks into a char-budgeted text for people and evaluations (SPEC 3.3).

Not what the agent sees: the agent is shown the projection of station 5.
"""

from __future__ import annotations

from models.lookup import ContextPack, EvidenceBlock
from models.vocab import PACK_STRATEGY

SEPARATOR = "\n\n"
ELLIPSIS = "..."


def render_header(rank: int, block: EvidenceBlock) -> str:
    """Everything of one block up to and including the newline after ``content:``."""
    return (
        f"[Evidence {rank}]\n"
        f"source: {block['source']}\n"
        f"breadcrumb: {block['breadcrumb'] or ''}\n"
        f"reasons: {', '.join(block['hit_reasons'])}\n"
        "content:\n"
    )


def pack(blocks: list[EvidenceBlock], char_budget: int) -> ContextPack:
    """Walk the blocks in rank order; lengths are Unicode code points.

    A block that fits whole goes in. The first that does not is cut (content plus ``...`` filling
    the budget exactly) if its separator and header still fit, else omitted; every block after it
    is omitted even if it would fit, because rank is priority.
    """
    parts: list[str] = []
    used = 0
    included: list[str] = []
    omitted: list[str] = []
    full = False
    for rank, block in enumerate(blocks, start=1):
        if full:
            omitted.append(block["source"])
            continue
        sep = SEPARATOR if parts else ""
        header = render_header(rank, block)
        whole = len(sep) + len(header) + len(block["content"])
        if used + whole <= char_budget:
            parts.append(sep + header + block["content"])
            used += whole
            included.append(block["source"])
            continue
        full = True
        room = char_budget - used - len(sep) - len(header) - len(ELLIPSIS)
        if room >= 0:
            parts.append(sep + header + block["content"][:room] + ELLIPSIS)
            used = char_budget
            included.append(block["source"])
        else:
            omitted.append(block["source"])
    text = "".join(parts)
    return {
        "packed_text": text,
        "strategy": PACK_STRATEGY,
        "char_budget": char_budget,
        "used_chars": len(text),
        "included_sources": included,
        "omitted_sources": omitted,
    }
