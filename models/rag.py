"""py-rag's answer as it arrives on ``raw-hits`` (tolerant reader) and the adapted hit (SPEC 2, 3.1)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired

from pydantic import AllowInfNan, ConfigDict, Strict, StringConstraints, TypeAdapter, with_config
from typing_extensions import TypedDict

_Str = Annotated[str, Strict()]
_NonEmptyStr = Annotated[str, Strict(), StringConstraints(min_length=1)]
# A finite JSON number: booleans, strings, NaN and infinities are rejected.
_Score = Annotated[float, Strict(), AllowInfNan(False)]


@with_config(ConfigDict(extra="ignore"))
class PyRagHit(TypedDict):
    """One chunk-level hit; unknown fields are ignored (py-rag may add fields at any time)."""

    evidence_key: _NonEmptyStr
    document_id: _NonEmptyStr
    source: _Str
    title: NotRequired[_Str | None]
    breadcrumb: NotRequired[_Str | None]
    excerpt: _Str
    quality_score: _Score
    relevance_level: NotRequired[Any]


@with_config(ConfigDict(extra="ignore"))
class PyRagResponse(TypedDict):
    """The ``response`` object of a raw-hits record."""

    query: _Str
    evidence_status: Literal["supported", "no_evidence"]
    hits: list[PyRagHit]
    relevance_level: NotRequired[Any]
    retrieval_trace: NotRequired[Any]


class RawHitsRecord(TypedDict):
    """A validated raw-hits record: ids checked against the id pattern, response validated."""

    run_id: str
    tool_call_id: str
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
