"""The review of claims' shapes (SPEC 4.2, docs/review-rules.md): what it reads of a cited projection, and
each claim of a text as the run page shows it."""

from __future__ import annotations

from collections.abc import Sequence

from typing_extensions import ReadOnly, TypedDict


class EvidenceSourceItem(TypedDict):
    """What the review reads of one evidence item (an :class:`~models.projection.EvidenceItem` is one)."""

    document_id: ReadOnly[object]
    source: ReadOnly[object]
    title: ReadOnly[object]
    breadcrumb: ReadOnly[object]
    excerpt: ReadOnly[object]


class EvidenceSource(TypedDict):
    """What the review reads of a cited projection (a :class:`~models.projection.RagToolResult` is one):
    its query and, with evidence found, its items. Read field by field: the run page's stored ones too."""

    query: ReadOnly[object]
    evidence_status: ReadOnly[object]
    evidence: ReadOnly[Sequence[EvidenceSourceItem]]


class Specific(TypedDict):
    """One claim of a text as the run page shows it: its support and where it was found (SPEC 4.2)."""

    kind: str
    value: str
    supported: bool
    tool_call_id: str | None
    document_id: str | None
