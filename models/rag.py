"""py-rag's answer as it arrives on ``raw-hits`` (tolerant reader) and the adapted hit (SPEC 2, 3.1)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired

from pydantic import AllowInfNan, ConfigDict, Field, Strict, StringConstraints, TypeAdapter, with_config
from typing_extensions import TypedDict

from models.ids import ValidId

_Str = Annotated[str, Strict()]
_NonEmptyStr = Annotated[str, Strict(), StringConstraints(min_length=1)]
# A finite JSON number: booleans, strings, NaN and infinities are rejected.
_Score = Annotated[float, Strict(), AllowInfNan(False)]


@with_config(ConfigDict(extra="ignore"))
class PyRagHit(TypedDict):
    """One chunk-level hit; unknown fields are ignored (py-rag may add fields at any time)."""

    evidence_key: Annotated[
        _NonEmptyStr,
        Field(description="Dedupe key; a '#chunk-N' suffix (N of 1-18 digits) gives the chunk index."),
    ]
    document_id: _NonEmptyStr
    source: _Str
    title: NotRequired[_Str | None]
    breadcrumb: NotRequired[_Str | None]
    excerpt: _Str
    quality_score: Annotated[
        _Score, Field(description="The rerank score, a finite number; clamped to [0, 1], never reorders.")
    ]
    relevance_level: NotRequired[
        Annotated[Any, Field(description="py-rag's grade; read for the audit only.")]
    ]


@with_config(ConfigDict(extra="ignore"))
class PyRagResponse(TypedDict):
    """The ``response`` object of a raw-hits record."""

    query: _Str
    evidence_status: Annotated[
        Literal["supported", "no_evidence"],
        Field(description="no_evidence means there are no candidates, even when hits is not empty."),
    ]
    hits: Annotated[
        list[PyRagHit],
        Field(description="In rank order; at most max_hits (default 1000), else SCHEMA_VIOLATION."),
    ]
    relevance_level: NotRequired[
        Annotated[Any, Field(description="py-rag's grade; read for the audit only.")]
    ]
    retrieval_trace: NotRequired[
        Annotated[Any, Field(description="py-rag's trace, carried on as received (any JSON).")]
    ]


class RawHitsRecord(TypedDict):
    """A validated raw-hits record: ids checked against the id pattern, response validated."""

    run_id: ValidId
    tool_call_id: ValidId
    response: PyRagResponse


class KnowledgeSearchHit(TypedDict):
    """The portable hit every later station reads; only the adapter knows py-rag's names."""

    evidence_key: str
    doc_id: str
    chunk_index: int | None
    content: str
    score: float
    score_label: str
    original_rank: int
    source: str
    title: str | None
    breadcrumb: str | None
    hit_reasons: list[str]


PY_RAG_RESPONSE_ADAPTER: TypeAdapter[PyRagResponse] = TypeAdapter(PyRagResponse)
