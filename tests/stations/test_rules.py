"""One table or test per rule of SPEC sections 2-4, with the SPEC's own numbers.

Builders at the top (``hit``, ``raw_record``, ``block``, ``lookup``, ``rag_result``, ``entry``,
``ledger_with``, ``item``, ``draft``) keep each case to the one thing it changes. Settings are the
``models.limits`` objects, built directly. Where the code disagrees with the SPEC the test says what
the SPEC wants; the cases that once disagreed keep the SPEC's words in their docstring.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from models.events import Rejection
from models.limits import (
    DeadLetterSettings,
    GuardSettings,
    InputLimits,
    PostprocessSettings,
    ToolProjectionLimits,
)
from models.lookup import EvidenceBlock, LookupResult
from models.projection import EVIDENCE_ITEM_FIELDS, RAG_TOOL_RESULT_FIELDS
from models.rag import PY_RAG_RESPONSE_ADAPTER
from models.validation import ContractError, validate
from models.verdict import VERDICT_ADAPTER, Verdict
from models.vocab import (
    ATTEMPT_REASON,
    COMPLETENESS_HINTS,
    FALLBACK_LIMITATION,
    FALLBACK_MESSAGE,
    ViolationCode,
)
from streams import codec
from streams.ledger.memory import MemoryLedgerStore
from streams.messages import Record
from streams.pipeline import PostprocessOutcome, process_lookup, process_raw_hits
from streams.settings import Settings
from streams.stations.adapt import adapt, chunk_index
from streams.stations.guard import violation_events
from streams.stations.ledger_view import LedgerLookup
from streams.stations.pack import pack
from streams.stations.project import Projection, canonical_projection, project_lookup
from tests.support import memory_ledger, verdict_of

ABSENT: Any = object()
"""Leave the field out of the built value altogether."""

_DEFAULT: Any = object()


def settings(
    *,
    input_limits: InputLimits | None = None,
    postprocess: PostprocessSettings | None = None,
    projection: ToolProjectionLimits | None = None,
) -> Settings:
    """Settings with the SPEC's defaults unless given (no EC_* variable can leak in)."""
    return Settings(
        input=input_limits or InputLimits(),
        postprocess=postprocess or PostprocessSettings(),
        projection=projection or ToolProjectionLimits(),
        guard=GuardSettings(),
        dead_letters=DeadLetterSettings(),
    )


def without_absent(values: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in values.items() if value is not ABSENT}


# =============================================================================================
# Builders: py-rag input and the pipeline
# =============================================================================================


def hit(
    key: str = "doc-a#chunk-0", score: Any = 0.9, *, doc: str | None = None, **fields: Any
) -> dict[str, Any]:
    """One py-rag hit; the document id is the key's part before ``#`` unless given."""
    document_id = doc if doc is not None else key.split("#", 1)[0]
    values = {
        "evidence_key": key,
        "document_id": document_id,
        "source": f"{document_id}-src",
        "title": f"{document_id} title",
        "breadcrumb": f"{document_id} > part",
        "excerpt": f"text of {key}",
        "quality_score": score,
        "relevance_level": "PRECISE",
    }
    values.update(fields)
    return without_absent(values)


def raw_record(
    *hits: dict[str, Any],
    run_id: Any = "run-1",
    tool_call_id: Any = "call-1",
    query: Any = "gateway timeout",
    status: Any = "supported",
    **response_fields: Any,
) -> dict[str, Any]:
    """A raw-hits record around some hits."""
    response = without_absent(
        {"query": query, "mode": "hybrid", "hits": list(hits), "evidence_status": status, **response_fields}
    )
    return without_absent({"run_id": run_id, "tool_call_id": tool_call_id, "response": response})


def run(record: dict[str, Any] | bytes, config: Settings | None = None) -> PostprocessOutcome:
    raw = record if isinstance(record, bytes) else codec.dumps(record)
    return process_raw_hits(raw, config or settings())


def accepted(record: dict[str, Any] | bytes, config: Settings | None = None) -> LookupResult:
    outcome = run(record, config)
    assert outcome.rejection is None, outcome.rejection
    assert outcome.lookup is not None
    assert outcome.lookup["status"] == "OK"
    return outcome.lookup


def rejected(record: dict[str, Any] | bytes, config: Settings | None = None) -> Rejection:
    outcome = run(record, config)
    assert outcome.rejection is not None, "the record was accepted"
    return outcome.rejection


def keys(lookup: LookupResult) -> list[str]:
    return [b["evidence_key"] for b in lookup["evidence_blocks"]]


# =============================================================================================
# SPEC 2: input validation
# =============================================================================================


def test_a_valid_record_is_accepted_with_unknown_fields_ignored() -> None:
    record = raw_record(hit(extra="x", nested={"a": [1]}), retrieval_trace={"mode": "hybrid"}, shiny=True)
    record["added_by_py_rag"] = {"v": 2}
    lookup = accepted(record)
    assert keys(lookup) == ["doc-a#chunk-0"]
    assert lookup["retrieval_trace"] == {"mode": "hybrid"}


def test_oversized_is_checked_on_the_raw_bytes_first() -> None:
    raw = codec.dumps(raw_record(hit()))
    assert run(raw, settings(input_limits=InputLimits(max_message_bytes=len(raw)))).rejection is None
    rejection = rejected(raw, settings(input_limits=InputLimits(max_message_bytes=len(raw) - 1)))
    assert rejection["reason"] == "OVERSIZED"
    garbage = b"\xff" * 20
    assert (
        rejected(garbage, settings(input_limits=InputLimits(max_message_bytes=10)))["reason"] == "OVERSIZED"
    )


def test_oversized_record_with_valid_ids_still_ends_as_a_failed_entry() -> None:
    """SPEC 1: each raw-hits record with valid ids ends in the ledger, FAILED when it was rejected."""
    raw = codec.dumps(raw_record(hit()))
    outcome = run(raw, settings(input_limits=InputLimits(max_message_bytes=len(raw) - 1)))
    assert outcome.rejection is not None and outcome.rejection["reason"] == "OVERSIZED"
    assert (outcome.rejection["run_id"], outcome.rejection["tool_call_id"]) != (None, None)
    assert outcome.lookup is not None and outcome.lookup["status"] == "FAILED"
    assert outcome.lookup["failure_reason"] == "OVERSIZED"
    garbage = run(b"{" + b" " * 30, settings(input_limits=InputLimits(max_message_bytes=10)))
    assert garbage.lookup is None and garbage.rejection is not None and garbage.rejection["run_id"] is None


def padded_to(size: int) -> bytes:
    """A valid raw-hits record of exactly ``size`` bytes (the query is the padding)."""
    bare = codec.dumps(raw_record(hit(), query=""))
    raw = codec.dumps(raw_record(hit(), query="x" * (size - len(bare))))
    assert len(raw) == size
    return raw


def test_default_max_message_bytes_is_1_mib() -> None:
    assert run(padded_to(1024 * 1024)).rejection is None
    assert rejected(padded_to(1024 * 1024 + 1))["reason"] == "OVERSIZED"


GOOD_TEXT = codec.dumps(raw_record(hit())).decode()


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(GOOD_TEXT.replace("0.9", "NaN").encode(), id="nan"),
        pytest.param(GOOD_TEXT.replace("0.9", "Infinity").encode(), id="infinity"),
        pytest.param(GOOD_TEXT.replace("0.9", "-Infinity").encode(), id="minus-infinity"),
        pytest.param(GOOD_TEXT.replace("0.9", "1e400").encode(), id="1e400"),
        pytest.param(GOOD_TEXT.replace("0.9", "1" + "0" * 400).encode(), id="huge-integer"),
        pytest.param(b"[" + GOOD_TEXT.encode() + b"]", id="array"),
        pytest.param(b'"run-1"', id="string"),
        pytest.param(b"42", id="number"),
        pytest.param(b"null", id="null"),
        pytest.param(b"", id="empty"),
        pytest.param(GOOD_TEXT.encode()[:-1], id="truncated"),
        pytest.param(
            GOOD_TEXT.replace("gateway", "gate\udcffway").encode("utf-8", "surrogateescape"), id="bad-utf8"
        ),
        pytest.param(b"\xef\xbb\xbf" + GOOD_TEXT.encode(), id="bom"),
        pytest.param(GOOD_TEXT.replace("gateway", "\\ud800").encode(), id="lone-surrogate"),
        pytest.param(GOOD_TEXT.encode().decode("utf-8").encode("utf-16"), id="utf-16"),
    ],
)
def test_malformed_json(raw: bytes) -> None:
    outcome = run(raw)
    assert outcome.rejection is not None
    assert outcome.rejection["reason"] == "MALFORMED_JSON"
    assert (outcome.rejection["run_id"], outcome.rejection["tool_call_id"]) == (None, None)
    assert outcome.lookup is None


@pytest.mark.parametrize("field", ["run_id", "tool_call_id"])
@pytest.mark.parametrize(
    "value",
    [
        pytest.param("run:1", id="colon"),
        pytest.param("r" * 129, id="129-chars"),
        pytest.param("", id="empty"),
        pytest.param(" ", id="blank"),
        pytest.param("run 1", id="space"),
        pytest.param("run-1\n", id="trailing-newline"),
        pytest.param("rün", id="non-ascii"),
        pytest.param("run/1", id="slash"),
        pytest.param(7, id="int"),
        pytest.param(None, id="null"),
        pytest.param(["run-1"], id="list"),
        pytest.param(ABSENT, id="absent"),
    ],
)
def test_invalid_id(field: str, value: Any) -> None:
    outcome = run(raw_record(hit(), **{field: value}))
    assert outcome.rejection is not None
    assert outcome.rejection["reason"] == "INVALID_ID"
    # Both ids are given only when both are valid; an invalid id never reaches the ledger.
    assert (outcome.rejection["run_id"], outcome.rejection["tool_call_id"]) == (None, None)
    assert outcome.lookup is None


@pytest.mark.parametrize("value", ["r" * 128, "A", "Az09._-", "..", "-"])
def test_valid_ids(value: str) -> None:
    lookup = accepted(raw_record(hit(), run_id=value, tool_call_id=value))
    assert (lookup["run_id"], lookup["tool_call_id"]) == (value, value)


def test_invalid_id_wins_over_a_bad_response() -> None:
    assert rejected(raw_record(run_id="a:b", query=5))["reason"] == "INVALID_ID"


def _set_record(field: str, value: Any) -> dict[str, Any]:
    return without_absent({**raw_record(hit()), field: value})


def _set_response(field: str, value: Any) -> dict[str, Any]:
    record = raw_record(hit())
    record["response"] = without_absent({**record["response"], field: value})
    return record


def _set_hit(field: str, value: Any) -> dict[str, Any]:
    return raw_record(hit(**{field: value}))


SCHEMA_CASES = [
    pytest.param(_set_record("response", ABSENT), id="response-absent"),
    pytest.param(_set_record("response", "hits"), id="response-not-object"),
    pytest.param(_set_record("response", None), id="response-null"),
    pytest.param(_set_response("query", ABSENT), id="query-absent"),
    pytest.param(_set_response("query", 5), id="query-int"),
    pytest.param(_set_response("query", None), id="query-null"),
    pytest.param(_set_response("evidence_status", ABSENT), id="status-absent"),
    pytest.param(_set_response("evidence_status", "maybe"), id="status-unknown"),
    pytest.param(_set_response("evidence_status", "SUPPORTED"), id="status-upper-case"),
    pytest.param(_set_response("hits", ABSENT), id="hits-absent"),
    pytest.param(_set_response("hits", {"0": {}}), id="hits-object"),
    pytest.param(_set_response("hits", None), id="hits-null"),
    pytest.param(_set_response("hits", ["hit"]), id="hit-not-object"),
    pytest.param(_set_hit("evidence_key", ABSENT), id="evidence_key-absent"),
    pytest.param(_set_hit("evidence_key", ""), id="evidence_key-empty"),
    pytest.param(_set_hit("evidence_key", 3), id="evidence_key-int"),
    pytest.param(_set_hit("document_id", ABSENT), id="document_id-absent"),
    pytest.param(_set_hit("document_id", ""), id="document_id-empty"),
    pytest.param(_set_hit("document_id", None), id="document_id-null"),
    pytest.param(_set_hit("source", ABSENT), id="source-absent"),
    pytest.param(_set_hit("source", None), id="source-null"),
    pytest.param(_set_hit("source", 1), id="source-int"),
    pytest.param(_set_hit("excerpt", ABSENT), id="excerpt-absent"),
    pytest.param(_set_hit("excerpt", ["x"]), id="excerpt-list"),
    pytest.param(_set_hit("title", 1), id="title-int"),
    pytest.param(_set_hit("breadcrumb", ["a", "b"]), id="breadcrumb-list"),
    pytest.param(_set_hit("quality_score", ABSENT), id="score-absent"),
    pytest.param(_set_hit("quality_score", None), id="score-null"),
    pytest.param(_set_hit("quality_score", "0.9"), id="score-string"),
    pytest.param(_set_hit("quality_score", True), id="score-true"),
    pytest.param(_set_hit("quality_score", False), id="score-false"),
    pytest.param(_set_hit("quality_score", [0.9]), id="score-list"),
]


@pytest.mark.parametrize("record", SCHEMA_CASES)
def test_schema_violation_keeps_the_ids(record: dict[str, Any]) -> None:
    outcome = run(record)
    assert outcome.rejection is not None
    assert outcome.rejection["reason"] == "SCHEMA_VIOLATION"
    assert (outcome.rejection["run_id"], outcome.rejection["tool_call_id"]) == ("run-1", "call-1")
    # A rejected record with valid ids travels on as FAILED, with no content (SPEC 3.4).
    assert outcome.lookup == {
        "run_id": "run-1",
        "tool_call_id": "call-1",
        "event_id": None,
        "origin": None,
        "source_timestamp": None,
        "status": "FAILED",
        "failure_reason": "SCHEMA_VIOLATION",
    }


@pytest.mark.parametrize("score", [float("nan"), float("inf"), float("-inf")], ids=["nan", "inf", "-inf"])
def test_non_finite_scores_are_not_numbers(score: float) -> None:
    # Strict JSON cannot carry them (MALFORMED_JSON above); the contract refuses them as well.
    response = raw_record(hit(score=score))["response"]
    with pytest.raises(ContractError) as info:
        validate(PY_RAG_RESPONSE_ADAPTER, response)
    assert info.value.path == "hits[0].quality_score"


@pytest.mark.parametrize("title", [None, ABSENT, "t", ""], ids=["null", "absent", "text", "empty"])
def test_title_and_breadcrumb_may_be_null_or_absent(title: Any) -> None:
    lookup = accepted(raw_record(hit(title=title, breadcrumb=title)))
    block = lookup["evidence_blocks"][0]
    expected = None if title is ABSENT else title
    assert (block["title"], block["breadcrumb"]) == (expected, expected)


def test_max_hits() -> None:
    three = raw_record(hit("a"), hit("b"), hit("c"))
    assert run(three, settings(input_limits=InputLimits(max_hits=3))).rejection is None
    rejection = rejected(three, settings(input_limits=InputLimits(max_hits=2)))
    assert rejection["reason"] == "SCHEMA_VIOLATION"
    assert rejected(raw_record(*[hit(f"d{i}") for i in range(1001)]))["reason"] == "SCHEMA_VIOLATION"
    assert accepted(raw_record(*[hit(f"d{i}") for i in range(1000)]))["candidate_count"] == 1000


# =============================================================================================
# SPEC 3.1: adapt
# =============================================================================================


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("doc#chunk-3", 3),
        ("doc#chunk-0", 0),
        ("doc#chunk-007", 7),
        ("doc#chunk-12#chunk-4", 4),
        ("doc", None),
        ("doc#chunk-", None),
        ("doc#chunk-x", None),
        ("doc#chunk--1", None),
        ("doc#chunk-3 ", None),
        ("doc#chunk-3\n", None),
        ("doc#chunk-3a", None),
        ("doc#chunk-٣", None),
        ("doc#Chunk-3", None),
        ("doc-chunk-3", None),
    ],
)
def test_chunk_index(key: str, expected: int | None) -> None:
    assert chunk_index(key) == expected


def test_chunk_index_through_the_pipeline() -> None:
    lookup = accepted(raw_record(hit("a#chunk-5"), hit("b", doc="b"), hit("c#chunk-", doc="c")))
    assert [b["chunk_index"] for b in lookup["evidence_blocks"]] == [5, None, None]


def test_adapt_maps_every_field_in_array_order() -> None:
    response = raw_record(
        hit("k#chunk-2", 0.4, doc="d", source="src", title=ABSENT, breadcrumb=None, excerpt="body"),
        hit("z", 1.5, doc="y"),
    )["response"]
    first, second = adapt(validate(PY_RAG_RESPONSE_ADAPTER, response))
    assert first == {
        "evidence_key": "k#chunk-2",
        "doc_id": "d",
        "chunk_index": 2,
        "content": "body",
        "score": 0.4,
        "score_label": "rerank",
        "original_rank": 1,
        "source": "src",
        "title": None,
        "breadcrumb": None,
        "hit_reasons": ["semantic_rank:1", "attempt:UNFILTERED_VECTOR"],
    }
    assert (second["original_rank"], second["hit_reasons"][0], second["score"]) == (2, "semantic_rank:2", 1.5)


# =============================================================================================
# SPEC 3.2: postprocess
# =============================================================================================

GATEWAY = "e2e-gateway-b9c1fa12-md-34223174"


def seed_record() -> dict[str, Any]:
    """The design note's seed: 7 hits, one repeated key, three chunks of one document."""
    return raw_record(
        hit(f"{GATEWAY}#chunk-1", 0.9147),
        hit(f"{GATEWAY}#chunk-2", 0.88),
        hit(f"{GATEWAY}#chunk-3", 0.8),
        hit("nginx-upstream-md-11#chunk-0", 0.71),
        hit(f"{GATEWAY}#chunk-1", 0.9, excerpt="a later copy"),
        hit("k8s-ingress-md-7#chunk-4", 0.55),
        hit("lb-health-md-3#chunk-2", 0.52),
    )


def test_seed_example_7_in_5_out() -> None:
    lookup = accepted(seed_record())
    assert lookup["candidate_count"] == 7
    assert lookup["evidence_block_count"] == 5
    assert keys(lookup) == [
        f"{GATEWAY}#chunk-1",
        f"{GATEWAY}#chunk-2",
        "nginx-upstream-md-11#chunk-0",
        "k8s-ingress-md-7#chunk-4",
        "lb-health-md-3#chunk-2",
    ]
    first = lookup["evidence_blocks"][0]
    # The merge: the first occurrence keeps its place, content and score; reasons are the union.
    assert first["hit_reasons"] == ["semantic_rank:1", ATTEMPT_REASON, "semantic_rank:5"]
    assert (first["content"], first["quality_score"], first["original_rank"]) == (
        f"text of {GATEWAY}#chunk-1",
        0.9147,
        1,
    )
    # The per-document cap drops chunk-3 (the third distinct block of the gateway document).
    assert [b["original_rank"] for b in lookup["evidence_blocks"]] == [1, 2, 4, 6, 7]
    assert (lookup["top_similarity"], lookup["relevance_level"], lookup["low_quality"]) == (
        0.9147,
        "PRECISE",
        False,
    )
    assert lookup["completeness_hint"] == COMPLETENESS_HINTS["PRECISE"]
    assert (lookup["found"], lookup["fallback_message"]) == (True, None)
    assert lookup["rerank_trace"] == [
        {"final_rank": rank, "source": b["source"], "score": b["quality_score"], "reasons": b["hit_reasons"]}
        for rank, b in enumerate(lookup["evidence_blocks"], start=1)
    ]


def test_total_cap_keeps_the_best_ranked() -> None:
    lookup = accepted(raw_record(*[hit(f"doc-{i}#chunk-0", 0.9) for i in range(7)]))
    assert keys(lookup) == [f"doc-{i}#chunk-0" for i in range(5)]
    tight = settings(postprocess=PostprocessSettings(return_n=2, max_chunks_per_doc=1))
    lookup = accepted(
        raw_record(hit("a#1", doc="a"), hit("a#2", doc="a"), hit("b#1", doc="b"), hit("c#1", doc="c")), tight
    )
    assert keys(lookup) == ["a#1", "b#1"]


def test_dedupe_runs_before_the_document_cap() -> None:
    # Repeats of a key are one block: three hits of a#1 plus a#2 fit the cap of 2 per document.
    record = raw_record(hit("a#1", doc="a"), hit("a#1", doc="a"), hit("a#1", doc="a"), hit("a#2", doc="a"))
    lookup = accepted(record)
    assert keys(lookup) == ["a#1", "a#2"]
    assert lookup["evidence_blocks"][0]["hit_reasons"] == [
        "semantic_rank:1",
        ATTEMPT_REASON,
        "semantic_rank:2",
        "semantic_rank:3",
    ]


def test_rank_not_score_orders_the_blocks() -> None:
    lookup = accepted(raw_record(hit("low", 0.1), hit("mid", 0.6), hit("top", 0.99)))
    assert keys(lookup) == ["low", "mid", "top"]
    assert [b["original_rank"] for b in lookup["evidence_blocks"]] == [1, 2, 3]
    # top_similarity is the best-ranked block's score, not the maximum.
    assert (lookup["top_similarity"], lookup["relevance_level"], lookup["low_quality"]) == (0.1, None, True)


@pytest.mark.parametrize(
    ("score", "level", "low_quality"),
    [
        (1.0, "PRECISE", False),
        (0.75, "PRECISE", False),
        (0.7499, "REFERENCE", False),
        (0.5, "REFERENCE", False),
        (0.4999, None, True),
        (0.0, None, True),
    ],
)
def test_threshold_edges(score: float, level: str | None, low_quality: bool) -> None:
    lookup = accepted(raw_record(hit(score=score), hit("b", 0.99)))
    assert lookup["top_similarity"] == score
    assert lookup["relevance_level"] == level
    assert lookup["low_quality"] is low_quality
    assert lookup["completeness_hint"] == COMPLETENESS_HINTS[level]


def test_thresholds_are_settings() -> None:
    strict = settings(postprocess=PostprocessSettings(precise_threshold=0.95, reference_threshold=0.8))
    assert accepted(raw_record(hit(score=0.9)), strict)["relevance_level"] == "REFERENCE"
    lookup = accepted(raw_record(hit(score=0.79)), strict)
    assert (lookup["relevance_level"], lookup["low_quality"]) == (None, True)


@pytest.mark.parametrize(
    ("score", "clamped"),
    [(1.7, 1.0), (2, 1.0), (-0.3, 0.0), (-1, 0.0), (1, 1.0), (0, 0.0), (0.42, 0.42)],
    ids=["above-1", "int-above-1", "below-0", "int-below-0", "int-1", "int-0", "inside"],
)
def test_clamp(score: float, clamped: float) -> None:
    lookup = accepted(raw_record(hit(score=score)))
    block = lookup["evidence_blocks"][0]
    assert block["quality_score"] == clamped
    assert type(block["quality_score"]) is float
    assert lookup["rerank_trace"][0]["score"] == clamped
    assert lookup["top_similarity"] == clamped


def test_no_evidence_without_hits() -> None:
    outcome = run(raw_record(status="no_evidence"))
    lookup = outcome.lookup
    assert lookup is not None and outcome.rejection is None
    assert (lookup["candidate_count"], lookup["evidence_block_count"], lookup["found"]) == (0, 0, False)
    assert lookup["fallback_message"] == FALLBACK_MESSAGE
    assert outcome.audit["contract_anomaly"] is None


def test_no_evidence_with_hits_means_no_candidates() -> None:
    outcome = run(raw_record(hit("a"), hit("b"), status="no_evidence"))
    lookup = outcome.lookup
    assert lookup is not None and outcome.rejection is None
    assert lookup["candidate_count"] == 0
    assert lookup["evidence_blocks"] == []
    assert (lookup["top_similarity"], lookup["relevance_level"], lookup["low_quality"]) == (None, None, True)
    assert lookup["completeness_hint"] == COMPLETENESS_HINTS[None]
    assert outcome.audit["contract_anomaly"] == "hits_with_no_evidence"
    assert outcome.audit["py_rag_evidence_status"] == "no_evidence"


def test_py_rag_levels_are_read_for_the_audit_only() -> None:
    outcome = run(raw_record(hit(score=0.1, relevance_level="PRECISE"), relevance_level="PRECISE"))
    assert outcome.lookup is not None
    assert outcome.lookup["relevance_level"] is None
    assert outcome.audit["py_rag_relevance_level"] == "PRECISE"
    assert outcome.audit["contract_anomaly"] is None


# =============================================================================================
# SPEC 3.3: pack
# =============================================================================================


def block(
    source: str = "s", content: str = "body", *, breadcrumb: str | None = "b", rank: int = 1
) -> EvidenceBlock:
    return {
        "evidence_key": f"{source}#chunk-{rank}",
        "doc_id": source,
        "chunk_index": rank,
        "source": source,
        "title": None,
        "breadcrumb": breadcrumb,
        "content": content,
        "quality_score": 0.9,
        "original_rank": rank,
        "hit_reasons": [f"semantic_rank:{rank}", ATTEMPT_REASON],
    }


def header(i: int, b: EvidenceBlock) -> str:
    """SPEC 3.3's header, written out independently of the station."""
    return (
        f"[Evidence {i}]\nsource: {b['source']}\nbreadcrumb: {b['breadcrumb'] or ''}\n"
        f"reasons: {', '.join(b['hit_reasons'])}\ncontent:\n"
    )


def rendered(i: int, b: EvidenceBlock) -> str:
    return header(i, b) + b["content"]


def test_pack_renders_blocks_joined_by_a_blank_line() -> None:
    a, b = block("a", "first"), block("b", "second", breadcrumb=None, rank=2)
    packed = pack([a, b], 4000)
    assert packed["packed_text"] == (
        "[Evidence 1]\nsource: a\nbreadcrumb: b\n"
        "reasons: semantic_rank:1, attempt:UNFILTERED_VECTOR\ncontent:\nfirst"
        "\n\n"
        "[Evidence 2]\nsource: b\nbreadcrumb: \n"
        "reasons: semantic_rank:2, attempt:UNFILTERED_VECTOR\ncontent:\nsecond"
    )
    assert packed["strategy"] == "ranked_evidence_char_budget"
    assert (packed["char_budget"], packed["used_chars"]) == (4000, len(packed["packed_text"]))
    assert (packed["included_sources"], packed["omitted_sources"]) == (["a", "b"], [])


def test_pack_separator_counts_against_the_budget() -> None:
    a, b = block("a", "x" * 10), block("b", "y" * 10, rank=2)
    exact = len(rendered(1, a)) + 2 + len(rendered(2, b))
    assert pack([a, b], exact)["packed_text"] == rendered(1, a) + "\n\n" + rendered(2, b)
    short = pack([a, b], exact - 1)
    assert short["packed_text"] == rendered(1, a) + "\n\n" + header(2, b) + "y" * 6 + "..."
    assert short["used_chars"] == exact - 1
    assert short["included_sources"] == ["a", "b"]


def test_pack_truncation_lands_exactly_on_the_budget() -> None:
    a = block("a", "0123456789" * 5)
    budget = len(header(1, a)) + 3 + 7
    packed = pack([a], budget)
    assert packed["packed_text"] == header(1, a) + "0123456" + "..."
    assert len(packed["packed_text"]) == packed["used_chars"] == budget


def test_pack_header_with_only_the_ellipsis_still_fits() -> None:
    a = block("a", "content")
    packed = pack([a], len(header(1, a)) + 3)
    assert packed["packed_text"] == header(1, a) + "..."
    assert packed["included_sources"] == ["a"]


def test_pack_header_that_does_not_fit_is_omitted() -> None:
    a, b = block("a", "x"), block("b", "y" * 50, rank=2)
    budget = len(rendered(1, a)) + 2 + len(header(2, b)) + 2  # no room for "..."
    packed = pack([a, b], budget)
    assert packed["packed_text"] == rendered(1, a)
    assert (packed["included_sources"], packed["omitted_sources"]) == (["a"], ["b"])
    assert packed["used_chars"] == len(rendered(1, a))


def test_pack_omits_everything_after_the_first_block_that_does_not_fit() -> None:
    small, huge, tiny = block("a", "x"), block("b" * 300, "y", rank=2), block("c", "", rank=3)
    budget = len(rendered(1, small)) + 2 + len(rendered(3, tiny))  # the tiny third one would fit
    packed = pack([small, huge, tiny], budget)
    assert packed["packed_text"] == rendered(1, small)
    assert (packed["included_sources"], packed["omitted_sources"]) == (["a"], ["b" * 300, "c"])


def test_pack_after_a_truncated_block_the_rest_is_omitted() -> None:
    a, b, c = block("a", "x" * 100), block("b", "y"), block("c", "z")
    packed = pack([a, b, c], len(header(1, a)) + 50)
    assert packed["packed_text"] == header(1, a) + "x" * 47 + "..."
    assert (packed["included_sources"], packed["omitted_sources"]) == (["a"], ["b", "c"])


def test_pack_counts_code_points_beyond_the_bmp() -> None:
    a = block("a", "😀" * 10)
    whole = pack([a], len(header(1, a)) + 10)
    assert whole["packed_text"] == rendered(1, a)
    assert whole["used_chars"] == len(header(1, a)) + 10
    cut = pack([a], len(header(1, a)) + 5)
    assert cut["packed_text"] == header(1, a) + "😀😀..."
    assert cut["used_chars"] == len(header(1, a)) + 5


def test_pack_zero_budget_and_no_blocks() -> None:
    packed = pack([block("a"), block("b", rank=2)], 0)
    assert (packed["packed_text"], packed["used_chars"]) == ("", 0)
    assert (packed["included_sources"], packed["omitted_sources"]) == ([], ["a", "b"])
    empty = pack([], 4000)
    assert (empty["packed_text"], empty["included_sources"], empty["omitted_sources"]) == ("", [], [])


def test_char_budget_setting_reaches_the_lookup() -> None:
    lookup = accepted(seed_record(), settings(postprocess=PostprocessSettings(char_budget=300)))
    pack_ = lookup["context_pack"]
    assert pack_ == pack(lookup["evidence_blocks"], 300)
    assert pack_["char_budget"] == 300
    assert 0 < pack_["used_chars"] <= 300
    assert len(pack_["included_sources"]) + len(pack_["omitted_sources"]) == 5
    assert pack_["omitted_sources"]
    assert accepted(seed_record())["context_pack"]["omitted_sources"] == []


# =============================================================================================
# SPEC 3.5: project
# =============================================================================================


def eblock(key: Any = ABSENT, content: Any = "c", **fields: Any) -> dict[str, Any]:
    """One evidence block as the projector reads it (any field may be left out or odd)."""
    return without_absent(
        {"evidence_key": key, "source": "s", "title": "t", "breadcrumb": "b", "content": content, **fields}
    )


def lookup(*blocks: Any, query: Any = "q", level: Any = "PRECISE", **fields: Any) -> dict[str, Any]:
    return without_absent(
        {
            "run_id": "run-1",
            "tool_call_id": "call-1",
            "query": query,
            "relevance_level": level,
            "evidence_blocks": list(blocks),
            **fields,
        }
    )


def projected(value: dict[str, Any], limits: ToolProjectionLimits | None = None) -> Projection:
    return project_lookup(value, limits or ToolProjectionLimits())


def document_ids(projection: Projection) -> list[str]:
    return [item["document_id"] for item in projection.result["evidence"]]


def test_projection_shape_and_canonical_bytes() -> None:
    p = projected(lookup(eblock("k#chunk-1", "网关超时 😀", title=None), query="网关"))
    expected = (
        '{"evidence_status":"EVIDENCE_FOUND","tool_call_id":"call-1","query":"网关","evidence":'
        '[{"document_id":"k#chunk-1","source":"s","title":null,"breadcrumb":"b",'
        '"excerpt":"网关超时 😀"}],"returned_count":1,"relevance_level":"PRECISE","truncated":false}'
    )
    assert p.canonical == expected.encode()
    assert p.canonical == canonical_projection(p.result)
    assert p.sha256 == hashlib.sha256(p.canonical).hexdigest()
    parsed = codec.loads(p.canonical)
    assert tuple(parsed) == RAG_TOOL_RESULT_FIELDS
    assert tuple(parsed["evidence"][0]) == EVIDENCE_ITEM_FIELDS


@pytest.mark.parametrize(
    ("query", "shown", "truncated"),
    [
        ("q" * 500, "q" * 500, False),
        ("q" * 501, "q" * 500, True),
        ("😀" * 501, "😀" * 500, True),
        ("", "", False),
        (ABSENT, "", False),
        (None, "", False),
        (42, "", False),
    ],
    ids=["500", "501", "astral-501", "empty", "absent", "null", "int"],
)
def test_query_cut_at_500(query: Any, shown: str, truncated: bool) -> None:
    p = projected(lookup(eblock("k"), query=query))
    assert (p.result["query"], p.result["truncated"]) == (shown, truncated)


@pytest.mark.parametrize(
    ("content", "shown", "truncated"),
    [
        ("e" * 1200, "e" * 1200, False),
        ("e" * 1201, "e" * 1200, True),
        ("😀" * 1201, "😀" * 1200, True),
    ],
    ids=["1200", "1201", "astral-1201"],
)
def test_excerpt_cut_at_1200(content: str, shown: str, truncated: bool) -> None:
    p = projected(lookup(eblock("k", content)))
    assert (p.result["evidence"][0]["excerpt"], p.result["truncated"]) == (shown, truncated)


def test_query_and_excerpt_limits_are_settings() -> None:
    limits = ToolProjectionLimits(max_query_chars=3, max_excerpt_chars=2)
    p = projected(lookup(eblock("k", "abc"), query="abcd"), limits)
    assert (p.result["query"], p.result["evidence"][0]["excerpt"], p.result["truncated"]) == (
        "abc",
        "ab",
        True,
    )


def test_item_cap_8() -> None:
    eight = projected(lookup(*[eblock(f"k{i}") for i in range(8)]))
    assert (eight.result["returned_count"], eight.result["truncated"]) == (8, False)
    nine = projected(lookup(*[eblock(f"k{i}") for i in range(9)]))
    assert document_ids(nine) == [f"k{i}" for i in range(8)]
    assert (nine.result["returned_count"], nine.result["truncated"]) == (8, True)


def test_duplicate_after_the_8th_still_sets_truncated() -> None:
    p = projected(lookup(*[eblock(f"k{i}") for i in range(8)], eblock("k0")))
    assert (p.result["returned_count"], p.result["truncated"]) == (8, True)


def test_duplicate_inside_the_cap_is_skipped_not_truncation() -> None:
    p = projected(
        lookup(
            *[eblock(f"k{i}") for i in range(4)],
            eblock("k1", "other"),
            *[eblock(f"k{i}") for i in range(4, 8)],
        )
    )
    assert document_ids(p) == [f"k{i}" for i in range(8)]
    assert p.result["evidence"][1]["excerpt"] == "c"  # the first occurrence is shown
    assert p.result["truncated"] is False


@pytest.mark.parametrize(
    ("fields", "identity"),
    [
        ({"evidence_key": "k", "document_id": "D", "doc_id": "d", "chunk_index": 1}, "k"),
        ({"evidence_key": "  ", "document_id": "D", "doc_id": "d", "chunk_index": 1}, "D"),
        ({"evidence_key": "", "document_id": "\t", "doc_id": "d", "chunk_index": 2}, "d#chunk-2"),
        ({"doc_id": "d", "chunk_index": 0}, "d#chunk-0"),
        ({"doc_id": "d"}, "evidence-1"),
        ({"doc_id": "d", "chunk_index": None}, "evidence-1"),
        ({"doc_id": " ", "chunk_index": 3}, "evidence-1"),
        ({"chunk_index": 3}, "evidence-1"),
        ({}, "evidence-1"),
        ({"evidenceKey": "ck"}, "ck"),
        ({"documentId": "CD"}, "CD"),
        ({"docId": "cd", "chunkIndex": 4}, "cd#chunk-4"),
        ({"doc_id": "d", "chunkIndex": 5}, "d#chunk-5"),
        ({"evidence_key": "snake", "evidenceKey": "camel"}, "snake"),
        ({"evidence_key": None, "evidenceKey": "camel"}, "camel"),
        ({"document_id": "snake", "documentId": "camel"}, "snake"),
        ({"doc_id": "snake", "docId": "camel", "chunk_index": 1, "chunkIndex": 2}, "snake#chunk-1"),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_identity_fallback_chain(fields: dict[str, Any], identity: str) -> None:
    p = projected(lookup({"source": "s", "content": "c", **fields}))
    assert document_ids(p) == [identity]


def test_identity_position_is_1_based_in_the_input_list() -> None:
    p = projected(lookup(eblock("k"), eblock(), eblock("k"), eblock()))
    assert document_ids(p) == ["k", "evidence-2", "evidence-4"]


@pytest.mark.parametrize(
    ("fields", "excerpt"),
    [
        ({"content": "c"}, "c"),
        ({"excerpt": "x"}, "x"),
        ({"content": "c", "excerpt": "x"}, "c"),
        ({"content": None, "excerpt": "x"}, "x"),
        ({"content": "", "excerpt": "x"}, ""),
        ({"content": 5}, ""),
        ({}, ""),
    ],
    ids=[
        "content",
        "excerpt-alias",
        "snake-first",
        "null-falls-back",
        "empty-is-not-null",
        "not-a-string",
        "missing",
    ],
)
def test_content_and_its_excerpt_alias(fields: dict[str, Any], excerpt: str) -> None:
    p = projected(lookup({"evidence_key": "k", **fields}))
    assert p.result["evidence"][0]["excerpt"] == excerpt


def test_source_title_breadcrumb_that_are_not_strings_become_null() -> None:
    p = projected(
        lookup(eblock("k", source=1, title=["t"], breadcrumb={"a": 1}), eblock("j", source="", title="t"))
    )
    first, second = p.result["evidence"]
    assert (first["source"], first["title"], first["breadcrumb"]) == (None, None, None)
    assert (second["source"], second["title"]) == ("", "t")


def test_non_object_blocks_count_as_empty_objects() -> None:
    p = projected(lookup(5, "k", None, ["k"], eblock("k")))
    assert document_ids(p) == ["evidence-1", "evidence-2", "evidence-3", "evidence-4", "k"]
    assert p.result["evidence"][0] == {
        "document_id": "evidence-1",
        "source": None,
        "title": None,
        "breadcrumb": None,
        "excerpt": "",
    }


@pytest.mark.parametrize(
    "blocks",
    [{"0": {"evidence_key": "k"}}, "k", 7, None, ABSENT],
    ids=["object", "string", "int", "null", "absent"],
)
def test_evidence_blocks_not_a_list_is_empty(blocks: Any) -> None:
    value = lookup()
    value["evidence_blocks"] = blocks
    p = projected(without_absent(value))
    assert p.result["evidence"] == []
    assert (p.result["evidence_status"], p.result["relevance_level"]) == ("NO_EVIDENCE", None)


def test_camel_case_aliases_for_blocks_level_and_call_id() -> None:
    value = {
        "toolCallId": "call-9",
        "query": "q",
        "relevanceLevel": "reference",
        "evidenceBlocks": [eblock("k")],
    }
    p = projected(value)
    assert (p.result["tool_call_id"], p.result["relevance_level"], document_ids(p)) == (
        "call-9",
        "REFERENCE",
        ["k"],
    )
    both = {
        "tool_call_id": "snake",
        "toolCallId": "camel",
        "evidence_blocks": None,
        "evidenceBlocks": [eblock("k")],
    }
    p = projected(both)
    assert (p.result["tool_call_id"], document_ids(p)) == ("snake", ["k"])


@pytest.mark.parametrize(
    ("level", "expected"),
    [
        ("PRECISE", "PRECISE"),
        ("precise", "PRECISE"),
        ("Reference", "REFERENCE"),
        ("rEfErEnCe", "REFERENCE"),
        ("Precise", "PRECISE"),
        ("reference", "REFERENCE"),
        # Only a-z and A-Z fold (SPEC 3.5.4); Unicode upper-casing would take the first two to PRECISE.
        ("preci\u017fe", None),  # LATIN SMALL LETTER LONG S
        ("prec\u0131se", None),  # LATIN SMALL LETTER DOTLESS I
        ("PREC\u0130SE", None),  # LATIN CAPITAL LETTER I WITH DOT ABOVE
        ("\uff30\uff32\uff25\uff23\uff29\uff33\uff25", None),  # FULLWIDTH "PRECISE"
        ("PRECISE\u200b", None),
        ("HIGH", None),
        (" PRECISE", None),
        ("", None),
        (None, None),
        (1, None),
        (["PRECISE"], None),
    ],
    ids=str,
)
def test_relevance_level_case_insensitive(level: Any, expected: str | None) -> None:
    assert projected(lookup(eblock("k"), level=level)).result["relevance_level"] == expected


def test_relevance_level_only_when_there_is_evidence() -> None:
    p = projected(lookup(level="PRECISE"))
    assert (p.result["evidence_status"], p.result["relevance_level"], p.result["returned_count"]) == (
        "NO_EVIDENCE",
        None,
        0,
    )


def items_bytes_lookup(n: int) -> dict[str, Any]:
    return lookup(*[eblock(f"k{i}", "x" * 50) for i in range(n)])


def test_byte_budget_trims_from_the_tail() -> None:
    value = items_bytes_lookup(4)
    full = projected(value)
    assert (full.result["returned_count"], full.result["truncated"]) == (4, False)
    cut = projected(value, ToolProjectionLimits(max_bytes=len(full.canonical) - 1))
    assert document_ids(cut) == ["k0", "k1", "k2"]
    assert (cut.result["returned_count"], cut.result["truncated"]) == (3, True)
    assert len(cut.canonical) <= len(full.canonical) - 1


def test_byte_budget_boundary_is_inclusive() -> None:
    value = items_bytes_lookup(3)
    one = dict(
        projected(value).result,
        evidence=projected(value).result["evidence"][:1],
        returned_count=1,
        truncated=True,
    )
    size = len(canonical_projection(one))
    assert projected(value, ToolProjectionLimits(max_bytes=size)).canonical == canonical_projection(one)
    assert projected(value, ToolProjectionLimits(max_bytes=size - 1)).result["returned_count"] == 0


def test_byte_budget_degrades_honestly_to_no_evidence() -> None:
    value = items_bytes_lookup(2)
    empty = {
        "evidence_status": "NO_EVIDENCE",
        "tool_call_id": "call-1",
        "query": "q",
        "evidence": [],
        "returned_count": 0,
        "relevance_level": None,
        "truncated": True,
    }
    limit = len(codec.dumps(empty))
    p = projected(value, ToolProjectionLimits(max_bytes=limit))
    assert p.result == empty
    assert p.canonical == codec.dumps(empty)


def test_fail_closed_when_even_no_evidence_is_too_large() -> None:
    value = items_bytes_lookup(2)
    empty = {
        "evidence_status": "NO_EVIDENCE",
        "tool_call_id": "call-1",
        "query": "q",
        "evidence": [],
        "returned_count": 0,
        "relevance_level": None,
        "truncated": True,
    }
    tight = settings(projection=ToolProjectionLimits(max_bytes=len(codec.dumps(empty)) - 1))
    outcome = process_lookup(codec.dumps(value), tight)
    assert outcome.projection is None
    assert outcome.rejection is not None
    assert outcome.rejection["reason"] == "PROJECTION_BUDGET_EXCEEDED"
    assert (outcome.rejection["run_id"], outcome.rejection["tool_call_id"]) == ("run-1", "call-1")
    assert outcome.event is not None
    assert (outcome.event["status"], outcome.event["failure_reason"]) == (
        "FAILED",
        "PROJECTION_BUDGET_EXCEEDED",
    )
    assert (outcome.event["projection"], outcome.event["projection_sha256"]) == (None, None)


def test_fail_closed_through_the_whole_chain_with_tightened_limits() -> None:
    tight = settings(projection=ToolProjectionLimits(max_bytes=40))
    lookup_ = accepted(seed_record(), tight)
    outcome = process_lookup(codec.dumps(lookup_), tight)
    assert outcome.projection is None
    assert outcome.rejection is not None and outcome.rejection["reason"] == "PROJECTION_BUDGET_EXCEEDED"
    assert outcome.event is not None and outcome.event["status"] == "FAILED"


def test_projected_event_carries_the_canonical_text_and_hash() -> None:
    outcome = process_lookup(codec.dumps(lookup(eblock("k"))), settings())
    assert outcome.projection is not None and outcome.event is not None
    assert outcome.event["projection"] == outcome.projection.canonical.decode()
    assert outcome.event["projection_sha256"] == hashlib.sha256(outcome.projection.canonical).hexdigest()
    assert (outcome.event["status"], outcome.event["failure_reason"]) == ("OK", None)


@pytest.mark.parametrize(
    "text", [b"[]", b'"x"', b"nope", b"", b"\xff"], ids=["array", "string", "not-json", "empty", "bad-utf8"]
)
def test_projector_text_that_is_not_an_object(text: bytes) -> None:
    outcome = process_lookup(text, settings())
    assert outcome.rejection is not None and outcome.rejection["reason"] == "MALFORMED_JSON"
    assert (outcome.event, outcome.projection) == (None, None)


ORIGIN = {"topic": "raw-hits", "partition": 2, "offset": 41, "timestamp": 1700000000123}


def test_event_ids_and_origin_are_deterministic() -> None:
    raw = codec.dumps(seed_record())
    first = process_raw_hits(raw, settings(), ORIGIN)
    again = process_raw_hits(raw, settings(), ORIGIN)
    assert first.lookup is not None
    assert codec.dumps(first.lookup) == codec.dumps(again.lookup)  # a re-delivery repeats the bytes
    assert first.lookup["event_id"] == "postprocess:raw-hits:2:41:1700000000123"
    assert (first.lookup["origin"], first.lookup["source_timestamp"]) == (ORIGIN, 1700000000123)
    consumed = {"topic": "postprocessed", "partition": 2, "offset": 7, "timestamp": 5}
    projected_ = process_lookup(codec.dumps(first.lookup), settings(), consumed)
    assert projected_.event is not None
    # The origin travels unchanged: the raw-hits record, not the record this station consumed.
    assert projected_.event["event_id"] == "project:raw-hits:2:41:1700000000123"
    assert (projected_.event["origin"], projected_.event["source_timestamp"]) == (ORIGIN, 1700000000123)


def test_a_recreated_topic_gives_new_event_ids_at_the_same_offsets() -> None:
    """After a topic is deleted and created again, offsets restart: the timestamp tells the records apart."""
    raw = codec.dumps(seed_record())
    before = process_raw_hits(raw, settings(), ORIGIN)
    recreated = process_raw_hits(raw, settings(), {**ORIGIN, "timestamp": 1800000000000})  # type: ignore[typeddict-item]
    assert before.lookup is not None and recreated.lookup is not None
    assert before.lookup["event_id"] != recreated.lookup["event_id"]
    no_time = process_raw_hits(raw, settings(), {**ORIGIN, "timestamp": None})  # type: ignore[typeddict-item]
    assert no_time.lookup is not None and no_time.lookup["event_id"] == "postprocess:raw-hits:2:41:-"


def test_a_rejected_record_travels_on_with_its_envelope() -> None:
    outcome = process_raw_hits(codec.dumps(raw_record(hit(score="x"))), settings(), ORIGIN)
    assert outcome.lookup == {
        "run_id": "run-1",
        "tool_call_id": "call-1",
        "event_id": "postprocess:raw-hits:2:41:1700000000123",
        "origin": ORIGIN,
        "source_timestamp": 1700000000123,
        "status": "FAILED",
        "failure_reason": "SCHEMA_VIOLATION",
    }


def test_failed_lookup_travels_on_as_failed() -> None:
    failed = run(raw_record(hit(quality_score="x"))).lookup
    outcome = process_lookup(codec.dumps(failed), settings())
    assert (outcome.projection, outcome.rejection) == (None, None)
    assert outcome.event is not None
    assert (outcome.event["status"], outcome.event["failure_reason"]) == ("FAILED", "SCHEMA_VIOLATION")
    assert (outcome.event["run_id"], outcome.event["tool_call_id"]) == ("run-1", "call-1")


def test_failed_lookup_with_an_odd_failure_reason_still_travels_on() -> None:
    value = {
        "run_id": "run-1",
        "tool_call_id": "call-1",
        "status": "FAILED",
        "failure_reason": ["SCHEMA_VIOLATION"],
    }
    outcome = process_lookup(codec.dumps(value), settings())
    assert outcome.rejection is None or outcome.rejection["reason"] != "INTERNAL_ERROR"
    assert outcome.event is not None and outcome.event["status"] == "FAILED"


# =============================================================================================
# SPEC 4: the guard — builders
# =============================================================================================

RUN = "run-1"
FOUND, NONE, MISSING = "call-found", "call-none", "call-missing"
DOC = "gw#chunk-1"


def rag_result(
    tool_call_id: str, *docs: str, level: Any = _DEFAULT, truncated: bool = False
) -> dict[str, Any]:
    """A well-formed RagToolResult citing some documents (NO_EVIDENCE when none)."""
    evidence = [
        {"document_id": d, "source": "src", "title": "t", "breadcrumb": "b", "excerpt": f"about {d}"}
        for d in docs
    ]
    return {
        "evidence_status": "EVIDENCE_FOUND" if docs else "NO_EVIDENCE",
        "tool_call_id": tool_call_id,
        "query": "q",
        "evidence": evidence,
        "returned_count": len(evidence),
        "relevance_level": ("PRECISE" if docs else None) if level is _DEFAULT else level,
        "truncated": truncated,
    }


def entry(
    tool_call_id: str,
    projection: dict[str, Any] | bytes | None = _DEFAULT,
    *,
    run_id: str = RUN,
    status: str = "READY",
    sha256: str | None = _DEFAULT,
    index_status: Any = _DEFAULT,
) -> dict[str, Any]:
    """A ledger entry whose ``projection_sha256`` is genuine unless given."""
    if projection is _DEFAULT:
        projection = rag_result(tool_call_id, DOC)
    data: bytes | None
    if isinstance(projection, dict):
        data = canonical_projection(projection)
    else:
        data = projection
    genuine = hashlib.sha256(data).hexdigest() if data is not None else None
    status_index = projection.get("evidence_status") if isinstance(projection, dict) else None
    return {
        "run_id": run_id,
        "tool_call_id": tool_call_id,
        "status": status,
        "evidence_status": status_index if index_status is _DEFAULT else index_status,
        "projection": data.decode("utf-8") if data is not None else None,
        "projection_sha256": genuine if sha256 is _DEFAULT else sha256,
    }


def base_entries() -> list[dict[str, Any]]:
    return [entry(FOUND, rag_result(FOUND, DOC)), entry(NONE, rag_result(NONE))]


def ledger_with(*entries: dict[str, Any]) -> MemoryLedgerStore:
    return memory_ledger(entries or base_entries())


def item(
    item_id: str = "a1",
    *tool_call_ids: str,
    kind: Any = "NORMAL",
    content: Any = "finding",
    document_ids: Any = ABSENT,
) -> dict[str, Any]:
    return without_absent(
        {
            "id": item_id,
            "kind": kind,
            "content": content,
            "tool_call_ids": list(tool_call_ids),
            "document_ids": document_ids,
        }
    )


def action(action_id: str = "p1", *refs: str, content: Any = "do it") -> dict[str, Any]:
    return without_absent({"id": action_id, "content": content, "based_on_analysis_ids": list(refs)})


def draft(
    analysis: Any = _DEFAULT,
    *,
    run_id: Any = RUN,
    draft_id: Any = "d-1",
    attempt: Any = 1,
    conclusion: Any = _DEFAULT,
    action_plan: Any = _DEFAULT,
    limitations: Any = _DEFAULT,
) -> dict[str, Any]:
    """A draft that passes against ``base_entries()`` unless a part is replaced."""
    return without_absent(
        {
            "run_id": run_id,
            "draft_id": draft_id,
            "attempt": attempt,
            "analysis": [item("a1", FOUND, document_ids=[DOC]), item("a2", NONE, kind="NEGATIVE_OBSERVATION")]
            if analysis is _DEFAULT
            else analysis,
            "conclusion": {"content": "raise the timeout", "based_on_analysis_ids": ["a1"]}
            if conclusion is _DEFAULT
            else conclusion,
            "action_plan": [action("p1", "a1")] if action_plan is _DEFAULT else action_plan,
            "limitations": ["only the knowledge base"] if limitations is _DEFAULT else limitations,
        }
    )


class FixedReader:
    """A ledger reader that returns given lookups and records every call."""

    def __init__(
        self, lookups: Mapping[str, LedgerLookup] | None = None, backing: MemoryLedgerStore | None = None
    ):
        self.lookups = dict(lookups or {})
        self.backing = backing
        self.calls: list[tuple[str, list[str]]] = []

    def read(self, run_id: str, tool_call_ids: Sequence[str]) -> Mapping[str, LedgerLookup]:
        self.calls.append((run_id, list(tool_call_ids)))
        if self.backing is not None:
            found = self.backing.read_now([(run_id, t) for t in tool_call_ids])
            return {t: found[(run_id, t)] for t in tool_call_ids}
        return {tcid: self.lookups.get(tcid, LedgerLookup(None, False)) for tcid in tool_call_ids}


def encode(value: dict[str, Any] | bytes) -> bytes:
    return value if isinstance(value, bytes) else codec.dumps(value)


def check(
    value: dict[str, Any] | bytes,
    ledger: Any = None,
    guard_settings: GuardSettings | None = None,
    record: Record | None = None,
) -> Verdict:
    """The guard station on one draft (offline unless ``record`` gives its coordinates)."""
    raw = encode(value)
    if record is not None:
        record = Record(record.topic, record.partition, record.offset, record.timestamp, None, raw)
    return verdict_of(raw, ledger if ledger is not None else ledger_with(), guard_settings, record)


def found(verdict: Verdict) -> list[tuple[str, str]]:
    return [(v["code"], v["path"]) for v in verdict["violations"]]


# =============================================================================================
# SPEC 4: each of the twenty codes
# =============================================================================================


def test_the_base_draft_passes() -> None:
    verdict = check(draft())
    assert (verdict["verdict"], verdict["violations"], verdict["violation_count"]) == ("PASS", [], 0)
    assert [s["tool_call_id"] for s in verdict["evidence_snapshot"]] == [FOUND, NONE]
    assert verdict["fallback_report"] is None


def at(i: int, j: int = 0) -> str:
    return f"analysis[{i}].tool_call_ids[{j}]"


def _with_first(**changes: Any) -> list[dict[str, Any]]:
    first = {**item("a1", FOUND, document_ids=[DOC]), **changes}
    return [without_absent(first), item("a2", NONE, kind="NEGATIVE_OBSERVATION")]


CODE_CASES = [
    pytest.param(b"{not json", None, [("DRAFT_UNPARSABLE", "")], id="DRAFT_UNPARSABLE"),
    pytest.param(
        draft([item(f"a{i}", FOUND) for i in range(1, 102)]),
        None,
        [("DRAFT_TOO_LARGE", "")],
        id="DRAFT_TOO_LARGE",
    ),
    pytest.param(draft(run_id=ABSENT), None, [("RUN_ID_MISSING", "run_id")], id="RUN_ID_MISSING"),
    pytest.param(
        draft([], conclusion=None, action_plan=[]),
        None,
        [("ANALYSIS_EMPTY", "analysis")],
        id="ANALYSIS_EMPTY",
    ),
    pytest.param(
        draft(action_plan=[action("a2", "a1")]),
        None,
        [("ID_DUPLICATE", "action_plan[0].id")],
        id="ID_DUPLICATE",
    ),
    pytest.param(
        draft(_with_first(content="  ")), None, [("CONTENT_EMPTY", "analysis[0].content")], id="CONTENT_EMPTY"
    ),
    pytest.param(
        draft(_with_first(kind="normal")),
        None,
        [("ANALYSIS_KIND_INVALID", "analysis[0].kind")],
        id="ANALYSIS_KIND_INVALID",
    ),
    pytest.param(
        draft(_with_first(tool_call_ids=[], document_ids=ABSENT)),
        None,
        [("ANALYSIS_CITATION_MISSING", "analysis[0].tool_call_ids")],
        id="ANALYSIS_CITATION_MISSING",
    ),
    pytest.param(
        draft(conclusion={"content": "c", "based_on_analysis_ids": []}),
        None,
        [("REFERENCE_MISSING", "conclusion.based_on_analysis_ids")],
        id="REFERENCE_MISSING",
    ),
    pytest.param(
        draft(action_plan=[action("p1", "a1", "p1")]),
        None,
        [("REFERENCE_UNKNOWN_ANALYSIS", "action_plan[0].based_on_analysis_ids[1]")],
        id="REFERENCE_UNKNOWN_ANALYSIS",
    ),
    pytest.param(
        draft(limitations=[" ", ""]), None, [("LIMITATIONS_MISSING", "limitations")], id="LIMITATIONS_MISSING"
    ),
    pytest.param(
        draft(_with_first(tool_call_ids=[MISSING])),
        None,
        [("CITATION_NOT_FOUND", at(0))],
        id="CITATION_NOT_FOUND",
    ),
    pytest.param(
        draft(),
        [entry(FOUND, None, status="FAILED"), entry(NONE, rag_result(NONE))],
        [("CITATION_NOT_READY", at(0))],
        id="CITATION_NOT_READY",
    ),
    pytest.param(
        draft(),
        [entry(FOUND, run_id="run-2"), entry(NONE, rag_result(NONE))],
        [("CITATION_CROSS_RUN", at(0))],
        id="CITATION_CROSS_RUN",
    ),
    pytest.param(
        draft([item("a1", FOUND), item("a2", NONE)]),
        None,
        [("NORMAL_CITES_NO_EVIDENCE", at(1))],
        id="NORMAL_CITES_NO_EVIDENCE",
    ),
    pytest.param(
        draft(_with_first(kind="NEGATIVE_OBSERVATION")),
        None,
        [("NEGATIVE_CITES_EVIDENCE", at(0))],
        id="NEGATIVE_CITES_EVIDENCE",
    ),
    pytest.param(
        draft(_with_first(document_ids=[DOC, "made-up#chunk-9"])),
        None,
        [("CITATION_DOCUMENT_UNKNOWN", "analysis[0].document_ids[1]")],
        id="CITATION_DOCUMENT_UNKNOWN",
    ),
    pytest.param(
        draft(),
        [entry(FOUND, b'{"evidence_status":'), entry(NONE, rag_result(NONE))],
        [("LEDGER_PAYLOAD_INVALID", at(0))],
        id="LEDGER_PAYLOAD_INVALID",
    ),
    pytest.param(
        draft(),
        [entry(FOUND, {**rag_result(FOUND, DOC), "score": 0.9}), entry(NONE, rag_result(NONE))],
        [("LEDGER_PAYLOAD_UNKNOWN_FIELD", at(0))],
        id="LEDGER_PAYLOAD_UNKNOWN_FIELD",
    ),
    pytest.param(
        draft(),
        [entry(FOUND, sha256=hashlib.sha256(b"other bytes").hexdigest()), entry(NONE, rag_result(NONE))],
        [("LEDGER_PAYLOAD_TAMPERED", at(0))],
        id="LEDGER_PAYLOAD_TAMPERED",
    ),
]


def test_the_code_table_covers_all_twenty_codes() -> None:
    assert {case.id for case in CODE_CASES} == set(ViolationCode)
    assert len(ViolationCode) == 20


@pytest.mark.parametrize(("value", "entries", "expected"), CODE_CASES)
def test_each_violation_code_with_its_path(
    value: dict[str, Any] | bytes, entries: list[dict[str, Any]] | None, expected: list[tuple[str, str]]
) -> None:
    verdict = check(value, ledger_with(*(entries or [])))
    assert found(verdict) == expected
    assert verdict["violation_count"] == len(expected)
    assert verdict["verdict"] == "REJECT"


# -- A. structure -----------------------------------------------------------------------------

UNPARSABLE_CASES = [
    pytest.param(b"not json", id="not-json"),
    pytest.param(b"", id="empty"),
    pytest.param(b"\xff\xfe", id="bad-utf8"),
    pytest.param(b"[]", id="array"),
    pytest.param(b'"draft"', id="string"),
    pytest.param(b"null", id="null"),
    pytest.param(codec.dumps(draft()).replace(b'"attempt":1', b'"attempt":NaN'), id="nan"),
    pytest.param(draft(draft_id=ABSENT), id="draft_id-absent"),
    pytest.param(draft(draft_id=None), id="draft_id-null"),
    pytest.param(draft(draft_id=""), id="draft_id-empty"),
    pytest.param(draft(draft_id=7), id="draft_id-int"),
    pytest.param(draft([{k: v for k, v in item("a1", FOUND).items() if k != "id"}]), id="analysis-id-absent"),
    pytest.param(draft([{**item("a1", FOUND), "id": 1}]), id="analysis-id-int"),
    pytest.param(
        draft(action_plan=[{"content": "x", "based_on_analysis_ids": ["a1"]}]), id="action-id-absent"
    ),
    pytest.param(draft(action_plan=[action(None, "a1")]), id="action-id-null"),
    pytest.param(draft("a1"), id="analysis-string"),
    pytest.param(draft(["a1"]), id="analysis-item-string"),
    pytest.param(draft(conclusion="done"), id="conclusion-string"),
    pytest.param(draft(action_plan={"p1": {}}), id="action_plan-object"),
    pytest.param(draft(limitations="none"), id="limitations-string"),
    pytest.param(draft(limitations=[1]), id="limitations-int-entry"),
    pytest.param(draft(_with_first(tool_call_ids=FOUND)), id="tool_call_ids-string"),
    pytest.param(draft(_with_first(tool_call_ids=[1])), id="tool_call_ids-int-entry"),
    pytest.param(draft(_with_first(document_ids=[None])), id="document_ids-null-entry"),
    pytest.param(draft(conclusion={"content": "c", "based_on_analysis_ids": "a1"}), id="based_on-string"),
    pytest.param(draft(_with_first(kind=1)), id="kind-int"),
    pytest.param(draft(_with_first(content=["x"])), id="content-list"),
    pytest.param(draft(attempt="2"), id="attempt-string"),
    pytest.param(draft(attempt=True), id="attempt-bool"),
    pytest.param(draft(attempt=1.5), id="attempt-float"),
    pytest.param(draft(run_id=5), id="run_id-int"),
    pytest.param(
        draft([item(f"a{i}", FOUND) for i in range(1, 102)], limitations="x"), id="type-checked-before-counts"
    ),
]


@pytest.mark.parametrize("value", UNPARSABLE_CASES)
def test_draft_unparsable_ends_the_check(value: dict[str, Any] | bytes) -> None:
    reader = FixedReader(backing=ledger_with())
    verdict = check(value, reader)
    assert found(verdict) == [("DRAFT_UNPARSABLE", "")]
    assert verdict["evidence_snapshot"] == []
    assert reader.calls == []
    assert verdict["draft_sha256"] == hashlib.sha256(encode(value)).hexdigest()


def _repeat(value: dict[str, Any], inside: str, name: str, first: Any) -> bytes:
    """``value`` as JSON with ``name`` written twice in the object holding ``inside``: ``first``, then
    its real value (a reader that keeps the last one sees exactly ``value``).
    """
    text = codec.dumps(value)
    anchor = inside.encode()
    assert text.count(anchor) == 1, inside
    return text.replace(anchor, codec.dumps(name) + b":" + codec.dumps(first) + b"," + anchor)


REPEATED_NAME_CASES = [
    pytest.param(
        codec.dumps(draft(run_id="run-b"))[:-1] + b',"run_id":"run-1"}', id="top-level-run_id-last-valid"
    ),
    pytest.param(_repeat(draft(), '"draft_id"', "run_id", "run-b"), id="top-level-run_id-first-valid"),
    pytest.param(_repeat(draft(), '"draft_id"', "draft_id", "d-0"), id="top-level-draft_id"),
    pytest.param(_repeat(draft(), '"draft_id"', "attempt", 2), id="top-level-attempt"),
    pytest.param(_repeat(draft(), '"draft_id"', "analysis", []), id="top-level-analysis"),
    pytest.param(_repeat(draft() | {"x-unknown": 2}, '"x-unknown"', "x-unknown", 1), id="top-level-unknown"),
    pytest.param(
        _repeat(draft(), '"kind":"NEGATIVE_OBSERVATION"', "kind", "NORMAL"), id="in-analysis-item-kind"
    ),
    pytest.param(
        _repeat(draft(), '"kind":"NEGATIVE_OBSERVATION"', "tool_call_ids", [FOUND]),
        id="in-analysis-item-citations",
    ),
    pytest.param(_repeat(draft(), '"content":"raise the timeout"', "content", ""), id="in-conclusion"),
    pytest.param(_repeat(draft(), '"content":"do it"', "id", "p0"), id="in-action"),
    pytest.param(
        _repeat(draft(limitations=["l"]) | {"meta": {"by": {"a": 1}}}, '"a":1', "a", 0),
        id="inside-an-unknown-field",
    ),
    pytest.param(
        _repeat(draft() | {"meta": [[{"z": 1}]]}, '"z":1', "z", 0), id="object-in-arrays-of-an-unknown-field"
    ),
    pytest.param(
        codec.dumps(draft()).replace(b'"draft_id"', b'"draft\\u005fid":"d-0","draft_id"'),
        id="same-name-escaped",
    ),
    pytest.param(
        codec.dumps(draft() | {"m": {"a:": 1}}).replace(b'"a:":1', b'"a\\u003a":0,"a:":1'),
        id="escaped-colon-in-a-name",
    ),
    pytest.param(  # deeper than orjson writes back: found by the token scan, reported before the depth
        codec.dumps(draft())[:-1] + b',"deep":' + b"[" * 300 + b'{"a":1,"a":2}' + b"]" * 300 + b"}",
        id="deeper-than-orjson-writes",
    ),
]


@pytest.mark.parametrize("raw", REPEATED_NAME_CASES)
def test_a_repeated_name_anywhere_is_draft_unparsable(raw: bytes) -> None:
    """SPEC 4 A.1: a repeated name in any object is not JSON (I-JSON): a reader that kept the first
    would judge another draft. Like any text that is not JSON, it gives nothing to read.
    """
    reader = FixedReader(backing=ledger_with())
    verdict = check(raw, reader)
    assert found(verdict) == [("DRAFT_UNPARSABLE", "")]
    assert "repeats the name" in verdict["violations"][0]["message"]
    assert (verdict["run_id"], verdict["draft_id"], verdict["attempt"]) == (None, None, 1)
    assert (verdict["verdict"], verdict["evidence_snapshot"], reader.calls) == ("REJECT", [], [])
    assert verdict["draft_sha256"] == hashlib.sha256(raw).hexdigest()


NO_REPEATED_NAME_CASES = [
    pytest.param(
        draft() | {"meta": {"run_id": "run-b", "draft_id": "d-2"}}, id="same-names-in-another-object"
    ),
    pytest.param(draft(_with_first(id="a1") + [item("a3", FOUND)]), id="same-names-in-sibling-items"),
    pytest.param(draft() | {"m": {"a": {"a": {"a": 1}}}}, id="same-name-nested"),
    pytest.param(draft() | {"note": "a:b", "c:": {"d": "::"}}, id="colons-in-names-and-values"),
    pytest.param(draft() | {"a:": 1, "a": 2}, id="names-that-differ-by-a-colon"),
]


@pytest.mark.parametrize("value", NO_REPEATED_NAME_CASES)
def test_a_draft_without_repeated_names_is_unaffected(value: dict[str, Any]) -> None:
    assert check(value)["verdict"] == "PASS"
    escaped = codec.dumps(value).replace(b"a:", b"a\\u003a")  # the same draft, a colon escaped
    assert check(escaped)["verdict"] == "PASS"


def _many_tool_calls() -> list[dict[str, Any]]:
    ids = [f"call-{i}" for i in range(51)]
    return [item("a1", *ids[:17]), item("a2", *ids[17:34]), item("a3", *ids[34:])]


TOO_LARGE_CASES = [
    pytest.param(draft([item(f"a{i}", FOUND) for i in range(1, 102)]), id="101-analysis-items"),
    pytest.param(draft(action_plan=[action(f"p{i}", "a1") for i in range(101)]), id="101-actions"),
    pytest.param(draft([item("a1", *[FOUND] * 51)]), id="51-tool_call_ids"),
    pytest.param(draft([item("a1", FOUND, document_ids=[DOC] * 51)]), id="51-document_ids"),
    pytest.param(
        draft(conclusion={"content": "c", "based_on_analysis_ids": ["a1"] * 51}), id="51-conclusion-refs"
    ),
    pytest.param(draft(action_plan=[action("p1", *["a1"] * 51)]), id="51-action-refs"),
    pytest.param(draft(_many_tool_calls()), id="51-distinct-tool-calls"),
]


@pytest.mark.parametrize("value", TOO_LARGE_CASES)
def test_draft_too_large_ends_the_check(value: dict[str, Any]) -> None:
    reader = FixedReader(backing=ledger_with())
    verdict = check(value, reader)
    assert found(verdict) == [("DRAFT_TOO_LARGE", "")]
    assert reader.calls == []
    assert (verdict["run_id"], verdict["draft_id"], verdict["attempt"]) == (RUN, "d-1", 1)


FIT_CASES = [
    pytest.param(draft([item(f"a{i}", FOUND) for i in range(1, 101)]), id="100-analysis-items"),
    pytest.param(draft(action_plan=[action(f"p{i}", "a1") for i in range(100)]), id="100-actions"),
    pytest.param(draft([item("a1", *[FOUND] * 50, document_ids=[DOC] * 50)]), id="50-entries"),
    pytest.param(
        draft(conclusion={"content": "c", "based_on_analysis_ids": ["a1"] * 50}), id="50-conclusion-refs"
    ),
]


@pytest.mark.parametrize("value", FIT_CASES)
def test_at_the_limits_a_draft_is_checked(value: dict[str, Any]) -> None:
    assert check(value)["verdict"] == "PASS"


def test_fifty_distinct_tool_calls_are_checked_not_too_large() -> None:
    verdict = check(
        draft(
            [item("a1", *[f"call-{i}" for i in range(25)]), item("a2", *[f"call-{i}" for i in range(25, 50)])]
        )
    )
    assert [code for code, _ in found(verdict)] == ["CITATION_NOT_FOUND"] * 50


def test_draft_over_max_draft_bytes_is_not_parsed() -> None:
    raw = codec.dumps(draft(attempt=2))
    assert check(raw, guard_settings=GuardSettings(max_draft_bytes=len(raw)))["verdict"] == "PASS"
    verdict = check(raw, guard_settings=GuardSettings(max_draft_bytes=len(raw) - 1))
    assert found(verdict) == [("DRAFT_TOO_LARGE", "")]
    # Not parsed at all: nothing is read from it, not even its ids or attempt.
    assert (verdict["run_id"], verdict["draft_id"], verdict["attempt"]) == (None, None, 1)
    assert verdict["draft_sha256"] == hashlib.sha256(raw).hexdigest()
    garbage = b"\xff" * 300
    assert found(check(garbage, guard_settings=GuardSettings(max_draft_bytes=299))) == [
        ("DRAFT_TOO_LARGE", "")
    ]
    assert found(check(b"x" * (256 * 1024 + 1))) == [("DRAFT_TOO_LARGE", "")]


def test_default_max_draft_bytes_is_256_kib() -> None:
    bare = codec.dumps(draft(limitations=[""]))
    raw = codec.dumps(draft(limitations=["x" * (256 * 1024 - len(bare))]))
    assert len(raw) == 256 * 1024
    assert check(raw)["verdict"] == "PASS"
    bigger = codec.dumps(draft(limitations=["x" * (256 * 1024 - len(bare) + 1)]))
    assert found(check(bigger)) == [("DRAFT_TOO_LARGE", "")]


@pytest.mark.parametrize(
    "run_id",
    [ABSENT, None, "", "  ", "run:1", "r" * 129],
    ids=["absent", "null", "empty", "blank", "colon", "129-chars"],
)
def test_run_id_missing_disables_citation_checks(run_id: Any) -> None:
    reader = FixedReader(backing=ledger_with())
    verdict = check(
        draft([item("a1", MISSING, "bad:id", kind="NEGATIVE_OBSERVATION")], run_id=run_id), reader
    )
    assert found(verdict) == [("RUN_ID_MISSING", "run_id")]
    assert verdict["evidence_snapshot"] == []
    assert reader.calls == []


@pytest.mark.parametrize("analysis", [[], None, ABSENT], ids=["empty", "null", "absent"])
def test_analysis_empty(analysis: Any) -> None:
    verdict = check(draft(analysis, conclusion=None, action_plan=ABSENT))
    assert found(verdict) == [("ANALYSIS_EMPTY", "analysis")]


def test_ids_share_one_namespace_and_every_repeat_is_reported() -> None:
    analysis = [item("a1", FOUND), item("a1", FOUND), item("x", FOUND)]
    verdict = check(draft(analysis, action_plan=[action("x", "a1"), action("a1", "a1")]))
    assert found(verdict) == [
        ("ID_DUPLICATE", "analysis[1].id"),
        ("ID_DUPLICATE", "action_plan[0].id"),
        ("ID_DUPLICATE", "action_plan[1].id"),
    ]


# SPEC 4 A.6: blank = nothing but White_Space, format characters (Cf) and the Hangul fillers.
BLANK_TEXTS = [
    pytest.param("", id="empty"),
    pytest.param("  ", id="spaces"),
    pytest.param("\n\t\r\v\f", id="ascii-whitespace"),
    pytest.param("\x85\xa0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000", id="unicode-white-space"),
    pytest.param("\u200b", id="zero-width-space"),
    pytest.param("\u200d", id="zero-width-joiner"),
    pytest.param("\u2060\ufeff", id="word-joiner-bom"),
    pytest.param("\u180e", id="mongolian-vowel-separator-cf"),
    pytest.param("\xad\u061c\u200e\u202e\U000e0001\U000e0041", id="other-format-chars"),
    pytest.param("\u3164", id="hangul-filler"),
    pytest.param("\u115f\u1160\uffa0", id="other-hangul-fillers"),
    pytest.param(" \u200b\u3164 ", id="mix"),
    pytest.param("\u200b" * 20_000 + "\u3000", id="long-mix"),
]
NOT_BLANK_TEXTS = [
    pytest.param("\x1c", id="file-separator-is-Cc"),  # str.isspace() says yes; White_Space says no
    pytest.param("\x1f\x1e\x1d", id="other-separators-are-Cc"),
    pytest.param("\x00", id="nul"),
    pytest.param("a\u200b", id="letter-then-zwsp"),
    pytest.param("\u200b \u3164.", id="blanks-then-dot"),
    pytest.param("\u2800", id="braille-blank-is-So"),
    pytest.param("\u3164" * 1000 + "x", id="long-blank-then-letter"),
]


@pytest.mark.parametrize("text", BLANK_TEXTS)
def test_blank_content_is_content_empty_everywhere(text: str) -> None:
    conclusion = {"content": text, "based_on_analysis_ids": ["a1"]}
    verdict = check(
        draft(
            _with_first(content=text), conclusion=conclusion, action_plan=[action("p1", "a1", content=text)]
        )
    )
    assert found(verdict) == [
        ("CONTENT_EMPTY", "analysis[0].content"),
        ("CONTENT_EMPTY", "conclusion.content"),
        ("CONTENT_EMPTY", "action_plan[0].content"),
    ]


@pytest.mark.parametrize("text", BLANK_TEXTS)
def test_only_blank_limitations_are_missing(text: str) -> None:
    assert found(check(draft(limitations=[text]))) == [("LIMITATIONS_MISSING", "limitations")]
    assert found(check(draft(limitations=[text, "\u200d", ""]))) == [("LIMITATIONS_MISSING", "limitations")]
    assert check(draft(limitations=[text, "the knowledge base only"]))["verdict"] == "PASS"


@pytest.mark.parametrize("text", BLANK_TEXTS)
def test_blank_run_id_is_run_id_missing(text: str) -> None:
    assert found(check(draft(run_id=text))) == [("RUN_ID_MISSING", "run_id")]


@pytest.mark.parametrize("text", NOT_BLANK_TEXTS)
def test_text_with_anything_else_is_not_blank(text: str) -> None:
    conclusion = {"content": text, "based_on_analysis_ids": ["a1"]}
    value = draft(
        _with_first(content=text),
        conclusion=conclusion,
        action_plan=[action("p1", "a1", content=text)],
        limitations=[text],
    )
    assert check(value)["verdict"] == "PASS"


@pytest.mark.parametrize(
    "content", ["", "  ", "\n\t", None, ABSENT], ids=["empty", "spaces", "whitespace", "null", "absent"]
)
def test_content_empty_everywhere(content: Any) -> None:
    conclusion = without_absent({"content": content, "based_on_analysis_ids": ["a1"]})
    verdict = check(
        draft(
            _with_first(content=content),
            conclusion=conclusion,
            action_plan=[action("p1", "a1", content=content)],
        )
    )
    assert found(verdict) == [
        ("CONTENT_EMPTY", "analysis[0].content"),
        ("CONTENT_EMPTY", "conclusion.content"),
        ("CONTENT_EMPTY", "action_plan[0].content"),
    ]


@pytest.mark.parametrize(
    "kind", ["normal", "NEGATIVE", "", None, ABSENT], ids=["lower", "short", "empty", "null", "absent"]
)
def test_analysis_kind_invalid(kind: Any) -> None:
    verdict = check(draft(_with_first(kind=kind)))
    assert found(verdict) == [("ANALYSIS_KIND_INVALID", "analysis[0].kind")]


@pytest.mark.parametrize("tool_call_ids", [[], None, ABSENT], ids=["empty", "null", "absent"])
def test_analysis_citation_missing(tool_call_ids: Any) -> None:
    verdict = check(draft(_with_first(tool_call_ids=tool_call_ids, document_ids=ABSENT)))
    assert found(verdict) == [("ANALYSIS_CITATION_MISSING", "analysis[0].tool_call_ids")]


@pytest.mark.parametrize("refs", [[], None, ABSENT], ids=["empty", "null", "absent"])
def test_reference_missing_for_conclusion_and_actions(refs: Any) -> None:
    conclusion = without_absent({"content": "c", "based_on_analysis_ids": refs})
    act = without_absent({"id": "p1", "content": "do", "based_on_analysis_ids": refs})
    verdict = check(draft(conclusion=conclusion, action_plan=[act]))
    assert found(verdict) == [
        ("REFERENCE_MISSING", "conclusion.based_on_analysis_ids"),
        ("REFERENCE_MISSING", "action_plan[0].based_on_analysis_ids"),
    ]


def test_conclusion_null_or_absent_is_legal() -> None:
    assert check(draft(conclusion=None))["verdict"] == "PASS"
    assert check(draft(conclusion=ABSENT, action_plan=None))["verdict"] == "PASS"


@pytest.mark.parametrize(
    "limitations",
    [[], None, ABSENT, [""], [" ", "\n"]],
    ids=["empty", "null", "absent", "one-blank", "blanks"],
)
def test_limitations_missing(limitations: Any) -> None:
    assert found(check(draft(limitations=limitations))) == [("LIMITATIONS_MISSING", "limitations")]


# -- B and C: citations and re-read ------------------------------------------------------------


def test_cited_id_that_is_not_a_valid_id_is_reported_not_found() -> None:
    reader = FixedReader(backing=ledger_with())
    verdict = check(draft([item("a1", FOUND, "bad:id", "")]), reader)
    assert found(verdict) == [("CITATION_NOT_FOUND", at(0, 1)), ("CITATION_NOT_FOUND", at(0, 2))]
    assert reader.calls == [(RUN, [FOUND])]  # an invalid id is never looked up


def test_only_invalid_cited_ids_are_still_reported_not_found() -> None:
    verdict = check(draft([item("a1", "bad:id")], conclusion=None, action_plan=[]), ledger_with())
    assert found(verdict) == [("CITATION_NOT_FOUND", at(0))]
    assert verdict["verdict"] == "REJECT"


def _precedence_cases() -> list[Any]:
    proj = rag_result(FOUND, DOC)
    missing_truncated = {k: v for k, v in proj.items() if k != "truncated"}
    extra_item = {**proj, "evidence": [{**proj["evidence"][0], "score": 1}], "returned_count": "1"}
    other = hashlib.sha256(b"x").hexdigest()
    return [
        pytest.param(
            entry(FOUND, b"{not json", sha256=other), "LEDGER_PAYLOAD_TAMPERED", id="tampered-over-not-json"
        ),
        pytest.param(
            entry(FOUND, {**proj, "extra": 1}, sha256=other),
            "LEDGER_PAYLOAD_TAMPERED",
            id="tampered-over-unknown",
        ),
        pytest.param(
            entry(FOUND, {**proj, "tool_call_id": "x"}, sha256=other),
            "LEDGER_PAYLOAD_TAMPERED",
            id="tampered-over-invalid",
        ),
        pytest.param(entry(FOUND, b"[1]"), "LEDGER_PAYLOAD_INVALID", id="not-an-object"),
        pytest.param(entry(FOUND, b'"text"'), "LEDGER_PAYLOAD_INVALID", id="a-string"),
        pytest.param(
            entry(FOUND, {**missing_truncated, "extra": 1}),
            "LEDGER_PAYLOAD_UNKNOWN_FIELD",
            id="unknown-over-missing",
        ),
        pytest.param(
            entry(FOUND, extra_item), "LEDGER_PAYLOAD_UNKNOWN_FIELD", id="unknown-item-field-over-wrong-type"
        ),
        pytest.param(
            entry(FOUND, {**proj, "tool_call_id": "call-x", "evidence": [{**proj["evidence"][0], "x": 1}]}),
            "LEDGER_PAYLOAD_UNKNOWN_FIELD",
            id="unknown-item-field-over-foreign-call-id",
        ),
        pytest.param(entry(FOUND, missing_truncated), "LEDGER_PAYLOAD_INVALID", id="missing-field"),
    ]


@pytest.mark.parametrize(("bad", "code"), _precedence_cases())
def test_precedence_inside_reread(bad: dict[str, Any], code: str) -> None:
    verdict = check(draft([item("a1", FOUND)]), ledger_with(bad))
    assert found(verdict) == [(code, at(0))]
    assert verdict["evidence_snapshot"] == []


@pytest.mark.parametrize(
    ("inside", "name", "first"),
    [
        ('"evidence_status"', "evidence_status", "NO_EVIDENCE"),
        ('"excerpt"', "document_id", "other#chunk-9"),
    ],
    ids=["top-level", "in-an-item"],
)
def test_reread_projection_that_repeats_a_name_is_invalid(inside: str, name: str, first: str) -> None:
    """Canonical bytes never repeat a name; stored bytes that do are not JSON (as in SPEC 4 A.1), even
    with a genuine hash: which value is "the" projection is not the guard's to pick.
    """
    text = canonical_projection(rag_result(FOUND, DOC))
    data = text.replace(inside.encode(), f'"{name}":"{first}",'.encode() + inside.encode(), 1)
    verdict = check(draft([item("a1", FOUND, document_ids=[DOC])]), ledger_with(entry(FOUND, data)))
    assert found(verdict) == [("LEDGER_PAYLOAD_INVALID", at(0))]
    assert "repeats the name" in verdict["violations"][0]["message"]
    assert verdict["evidence_snapshot"] == []


def _drop(projection: dict[str, Any], name: str) -> dict[str, Any]:
    return {k: v for k, v in projection.items() if k != name}


def _item_set(projection: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {**projection, "evidence": [{**projection["evidence"][0], **changes}]}


def _item_drop(projection: dict[str, Any], name: str) -> dict[str, Any]:
    return {**projection, "evidence": [{k: v for k, v in projection["evidence"][0].items() if k != name}]}


P = rag_result(FOUND, DOC)
INVALID_CASES = [
    pytest.param(None, id="no-projection"),
    pytest.param(b"", id="empty-bytes"),
    pytest.param(b"{not json", id="not-json"),
    pytest.param(b"null", id="null"),
    *[pytest.param(_drop(P, name), id=f"missing-{name}") for name in RAG_TOOL_RESULT_FIELDS],
    *[pytest.param(_item_drop(P, name), id=f"item-missing-{name}") for name in EVIDENCE_ITEM_FIELDS],
    pytest.param(_item_set(P, document_id=5), id="document_id-int"),
    pytest.param(_item_set(P, document_id=None), id="document_id-null"),
    pytest.param(_item_set(P, excerpt=None), id="excerpt-null"),
    pytest.param(_item_set(P, source=5), id="source-int"),
    pytest.param(_item_set(P, title=["t"]), id="title-list"),
    pytest.param(_item_set(P, breadcrumb=False), id="breadcrumb-bool"),
    pytest.param({**P, "query": None}, id="query-null"),
    pytest.param({**P, "tool_call_id": 7}, id="tool_call_id-int"),
    pytest.param({**P, "truncated": "false"}, id="truncated-string"),
    pytest.param({**P, "truncated": 0}, id="truncated-int"),
    pytest.param({**P, "returned_count": "1"}, id="returned_count-string"),
    pytest.param({**P, "returned_count": True}, id="returned_count-bool"),
    pytest.param({**P, "returned_count": 1.0}, id="returned_count-float"),
    pytest.param({**P, "returned_count": 2}, id="returned_count-mismatch"),
    pytest.param({**P, "evidence_status": "FOUND"}, id="evidence_status-unknown"),
    pytest.param({**P, "evidence_status": None}, id="evidence_status-null"),
    pytest.param({**P, "relevance_level": "precise"}, id="relevance_level-lower-case"),
    pytest.param({**P, "relevance_level": 1}, id="relevance_level-int"),
    pytest.param({**P, "tool_call_id": "call-other"}, id="tool_call_id-not-the-key"),
    pytest.param({**P, "evidence": {"0": P["evidence"][0]}}, id="evidence-object"),
    pytest.param({**P, "evidence": ["item"], "returned_count": 1}, id="evidence-item-string"),
]


@pytest.mark.parametrize("bad", INVALID_CASES)
def test_ledger_payload_invalid(bad: dict[str, Any] | bytes | None) -> None:
    verdict = check(draft([item("a1", FOUND)]), ledger_with(entry(FOUND, bad)))
    assert found(verdict) == [("LEDGER_PAYLOAD_INVALID", at(0))]


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param({**P, "evidence_status": ["EVIDENCE_FOUND"]}, id="evidence_status-list"),
        pytest.param({**P, "relevance_level": {"level": "PRECISE"}}, id="relevance_level-object"),
    ],
)
def test_ledger_payload_invalid_for_unhashable_enum_values(bad: dict[str, Any]) -> None:
    verdict = check(draft([item("a1", FOUND)]), ledger_with(entry(FOUND, bad)))
    assert found(verdict) == [("LEDGER_PAYLOAD_INVALID", at(0))]


def test_ledger_payload_unknown_field_at_any_level() -> None:
    top = entry(FOUND, {**P, "scores": [0.9]})
    nested = entry(NONE, _item_set(rag_result(NONE, DOC), rerank=0.9))
    verdict = check(draft([item("a1", FOUND, NONE)]), ledger_with(top, nested))
    assert found(verdict) == [
        ("LEDGER_PAYLOAD_UNKNOWN_FIELD", at(0, 0)),
        ("LEDGER_PAYLOAD_UNKNOWN_FIELD", at(0, 1)),
    ]


def test_tampered_is_judged_on_the_stored_bytes() -> None:
    good = entry(FOUND)
    upper = dict(good, projection_sha256=good["projection_sha256"].upper())
    assert found(check(draft([item("a1", FOUND)]), ledger_with(upper))) == [
        ("LEDGER_PAYLOAD_TAMPERED", at(0))
    ]
    edited = dict(good, projection=good["projection"].replace("about", "abut"))
    assert found(check(draft([item("a1", FOUND)]), ledger_with(edited))) == [
        ("LEDGER_PAYLOAD_TAMPERED", at(0))
    ]
    no_hash = dict(good, projection_sha256=None)
    assert found(check(draft([item("a1", FOUND)]), ledger_with(no_hash))) == [
        ("LEDGER_PAYLOAD_TAMPERED", at(0))
    ]


def _b_order_cases() -> list[Any]:
    foreign_failed = entry(FOUND, None, run_id="run-2", status="FAILED")
    foreign_tampered = entry(FOUND, run_id="run-2", sha256="0" * 64)
    return [
        pytest.param(FixedReader({}), "CITATION_NOT_FOUND", id="no-entry-no-owner"),
        pytest.param(
            FixedReader({FOUND: LedgerLookup(None, True)}), "CITATION_CROSS_RUN", id="no-entry-foreign-owner"
        ),
        pytest.param(
            FixedReader({FOUND: LedgerLookup(entry(FOUND, None, status="FAILED"), True)}),
            "CITATION_NOT_READY",
            id="entry-wins-over-foreign-owner",
        ),
        pytest.param(
            FixedReader({FOUND: LedgerLookup(foreign_failed)}),
            "CITATION_NOT_READY",
            id="ready-before-same-run",
        ),
        pytest.param(
            FixedReader({FOUND: LedgerLookup(entry(FOUND, status="PENDING"))}),
            "CITATION_NOT_READY",
            id="unknown-status",
        ),
        pytest.param(
            FixedReader({FOUND: LedgerLookup(foreign_tampered)}),
            "CITATION_CROSS_RUN",
            id="same-run-before-reread",
        ),
        pytest.param(
            FixedReader({FOUND: LedgerLookup(entry(FOUND, sha256="0" * 64))}),
            "LEDGER_PAYLOAD_TAMPERED",
            id="reread-before-kind",
        ),
    ]


@pytest.mark.parametrize(("reader", "code"), _b_order_cases())
def test_citation_check_order(reader: FixedReader, code: str) -> None:
    # A NEGATIVE item citing evidence would also fail the kind check: only the first failure counts.
    verdict = check(draft([item("a1", FOUND, kind="NEGATIVE_OBSERVATION")]), reader)
    assert found(verdict) == [(code, at(0))]


def test_cross_run_in_the_in_memory_ledger() -> None:
    ledger = ledger_with(entry(FOUND, run_id="run-2"), entry(NONE, rag_result(NONE)))
    assert found(check(draft([item("a1", FOUND)]), ledger)) == [("CITATION_CROSS_RUN", at(0))]
    assert found(check(draft([item("a1", FOUND)], run_id="run-2"), ledger)) == []


def test_kind_is_judged_on_the_reread_projection_not_the_index() -> None:
    lying_index = entry(FOUND, index_status="NO_EVIDENCE")
    verdict = check(draft([item("a1", FOUND)]), ledger_with(lying_index))
    assert verdict["verdict"] == "PASS"
    assert verdict["evidence_snapshot"][0]["evidence_status"] == "EVIDENCE_FOUND"


def test_a_tool_call_cited_twice_is_reported_at_both_paths() -> None:
    analysis = [item("a1", MISSING, FOUND, MISSING), item("a2", MISSING, NONE, NONE)]
    reader = FixedReader(backing=ledger_with())
    verdict = check(draft(analysis), reader)
    assert found(verdict) == [
        ("CITATION_NOT_FOUND", at(0, 0)),
        ("CITATION_NOT_FOUND", at(0, 2)),
        ("CITATION_NOT_FOUND", at(1, 0)),
        ("NORMAL_CITES_NO_EVIDENCE", at(1, 1)),
        ("NORMAL_CITES_NO_EVIDENCE", at(1, 2)),
    ]
    # Every cited entry is read in one call, each distinct id once, in first-cited order.
    assert reader.calls == [(RUN, [MISSING, FOUND, NONE])]
    assert [s["tool_call_id"] for s in verdict["evidence_snapshot"]] == [FOUND, NONE]


@pytest.mark.parametrize(
    ("analysis_item", "expected"),
    [
        pytest.param(
            item("a1", MISSING, document_ids=["made-up"]), [("CITATION_NOT_FOUND", at(0))], id="none-passed"
        ),
        pytest.param(
            item("a1", "call-tampered", document_ids=[DOC]),
            [("LEDGER_PAYLOAD_TAMPERED", at(0))],
            id="only-tampered",
        ),
        pytest.param(
            item("a1", MISSING, FOUND, document_ids=["made-up", DOC]),
            [("CITATION_NOT_FOUND", at(0)), ("CITATION_DOCUMENT_UNKNOWN", "analysis[0].document_ids[0]")],
            id="one-passed",
        ),
        pytest.param(
            item("a1", FOUND, kind="NEGATIVE_OBSERVATION", document_ids=["made-up"]),
            [
                ("NEGATIVE_CITES_EVIDENCE", at(0)),
                ("CITATION_DOCUMENT_UNKNOWN", "analysis[0].document_ids[0]"),
            ],
            id="kind-failure-still-passed-reread",
        ),
        pytest.param(
            item("a1", NONE, document_ids=[DOC]),
            [
                ("NORMAL_CITES_NO_EVIDENCE", at(0)),
                ("CITATION_DOCUMENT_UNKNOWN", "analysis[0].document_ids[0]"),
            ],
            id="not-in-the-cited-projection",
        ),
        pytest.param(
            item("a1", NONE, FOUND, document_ids=[DOC]),
            [("NORMAL_CITES_NO_EVIDENCE", at(0, 0))],
            id="known-through-another-citation",
        ),
        pytest.param(item("a1", FOUND, document_ids=[]), [], id="empty-list"),
        pytest.param(item("a1", FOUND, document_ids=None), [], id="null-list"),
    ],
)
def test_citation_document_unknown_only_after_a_citation_passed(
    analysis_item: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    ledger = ledger_with(*base_entries(), entry("call-tampered", sha256="0" * 64))
    verdict = check(draft([analysis_item], conclusion=None, action_plan=[]), ledger)
    assert found(verdict) == expected


def test_all_violations_are_collected_in_a_deterministic_order() -> None:
    analysis = [item("a1", MISSING, kind="GUESS", content=""), item("a1", NONE)]
    conclusion = {"content": "", "based_on_analysis_ids": ["zz"]}
    value = draft(analysis, conclusion=conclusion, action_plan=[action("p1", "a1", "zz")], limitations=[])
    first, second = check(value), check(value)
    assert found(first) == [
        ("CONTENT_EMPTY", "analysis[0].content"),
        ("ANALYSIS_KIND_INVALID", "analysis[0].kind"),
        ("ID_DUPLICATE", "analysis[1].id"),
        ("CONTENT_EMPTY", "conclusion.content"),
        ("REFERENCE_UNKNOWN_ANALYSIS", "conclusion.based_on_analysis_ids[0]"),
        ("REFERENCE_UNKNOWN_ANALYSIS", "action_plan[0].based_on_analysis_ids[1]"),
        ("LIMITATIONS_MISSING", "limitations"),
        ("CITATION_NOT_FOUND", at(0)),
        ("NORMAL_CITES_NO_EVIDENCE", at(1)),
    ]
    assert codec.dumps(first) == codec.dumps(second)


# -- the verdict --------------------------------------------------------------------------------


def _many_violations() -> dict[str, Any]:
    return draft([item(f"a{i}", MISSING) for i in range(1, 6)], conclusion=None, action_plan=[])


def test_max_violations_truncates_the_list_not_the_count() -> None:
    full = check(_many_violations())
    assert full["violation_count"] == 5 and full["violations_truncated"] is False
    cut = check(_many_violations(), guard_settings=GuardSettings(max_violations=2))
    assert cut["violations"] == full["violations"][:2]
    assert (cut["violation_count"], cut["violations_truncated"]) == (5, True)
    exact = check(_many_violations(), guard_settings=GuardSettings(max_violations=5))
    assert (len(exact["violations"]), exact["violations_truncated"]) == (5, False)
    none = check(_many_violations(), guard_settings=GuardSettings(max_violations=0))
    assert (none["violations"], none["violation_count"], none["verdict"]) == ([], 5, "REJECT")


def test_default_max_violations_is_200() -> None:
    analysis = [item(f"a{i}", *[MISSING] * 3) for i in range(1, 71)]  # 210 citation failures
    verdict = check(draft(analysis, conclusion=None, action_plan=[]))
    assert (len(verdict["violations"]), verdict["violation_count"], verdict["violations_truncated"]) == (
        200,
        210,
        True,
    )


FALLBACK_REPORT = {"conclusion": None, "limitations": [FALLBACK_LIMITATION]}


@pytest.mark.parametrize(
    ("attempt", "max_attempts", "bad", "expected", "shown_attempt"),
    [
        (1, 2, False, "PASS", 1),
        (5, 2, False, "PASS", 5),
        (1, 2, True, "REJECT", 1),
        (2, 2, True, "FALLBACK", 2),
        (3, 2, True, "FALLBACK", 3),
        (1, 1, True, "FALLBACK", 1),
        (2, 3, True, "REJECT", 2),
        (ABSENT, 2, True, "REJECT", 1),
        (None, 1, True, "FALLBACK", 1),
    ],
)
def test_pass_reject_fallback(
    attempt: Any, max_attempts: int, bad: bool, expected: str, shown_attempt: int
) -> None:
    value = draft(limitations=[] if bad else _DEFAULT, attempt=attempt)
    verdict = check(value, guard_settings=GuardSettings(max_attempts=max_attempts))
    assert (verdict["verdict"], verdict["attempt"]) == (expected, shown_attempt)
    assert verdict["fallback_report"] == (FALLBACK_REPORT if expected == "FALLBACK" else None)


@pytest.mark.parametrize(
    ("raw", "run_id", "draft_id", "attempt"),
    [
        pytest.param(b"not json", None, None, 1, id="not-json"),
        pytest.param(b'["run-1"]', None, None, 1, id="array"),
        pytest.param(
            codec.dumps({"run_id": "  ", "draft_id": "d", "attempt": 3, "analysis": "x"}),
            "  ",
            "d",
            3,
            id="all-readable",
        ),
        pytest.param(
            codec.dumps({"run_id": 5, "draft_id": "", "attempt": 0}), None, None, 1, id="none-readable"
        ),
        pytest.param(
            codec.dumps({"run_id": "r", "draft_id": 5, "attempt": True}), "r", None, 1, id="bool-attempt"
        ),
        pytest.param(
            codec.dumps({"run_id": "r:1", "draft_id": "d", "attempt": 2.0}), "r:1", "d", 1, id="float-attempt"
        ),
        pytest.param(codec.dumps({"run_id": None, "attempt": -2}), None, None, 1, id="negative-attempt"),
    ],
)
def test_early_end_carries_what_could_be_read(
    raw: bytes, run_id: str | None, draft_id: str | None, attempt: int
) -> None:
    verdict = check(raw)
    assert found(verdict) == [("DRAFT_UNPARSABLE", "")]
    assert (verdict["run_id"], verdict["draft_id"], verdict["attempt"]) == (run_id, draft_id, attempt)
    assert verdict["draft_sha256"] == hashlib.sha256(raw).hexdigest()


def test_too_many_items_at_the_last_attempt_falls_back() -> None:
    verdict = check(draft([item(f"a{i}", FOUND) for i in range(1, 102)], attempt=2))
    assert found(verdict) == [("DRAFT_TOO_LARGE", "")]
    assert (verdict["attempt"], verdict["verdict"], verdict["fallback_report"]) == (
        2,
        "FALLBACK",
        FALLBACK_REPORT,
    )


def test_evidence_snapshot_is_distinct_in_first_cited_order_from_the_ledger_bytes() -> None:
    second_doc = rag_result("call-ref", "other#chunk-2", level="REFERENCE", truncated=True)
    ledger = ledger_with(
        *base_entries(), entry("call-ref", second_doc), entry("call-tampered", sha256="0" * 64)
    )
    analysis = [
        item("a1", NONE, "call-tampered", kind="NEGATIVE_OBSERVATION"),
        item("a2", "call-ref", FOUND),
        item("a3", FOUND, "call-ref"),
    ]
    verdict = check(draft(analysis, conclusion=None, action_plan=[]), ledger)
    assert found(verdict) == [("LEDGER_PAYLOAD_TAMPERED", at(0, 1))]
    snapshot = verdict["evidence_snapshot"]
    assert [s["tool_call_id"] for s in snapshot] == [NONE, "call-ref", FOUND]
    by_id = {
        e["tool_call_id"]: e
        for e in (entry(NONE, rag_result(NONE)), entry("call-ref", second_doc), entry(FOUND))
    }
    for shot in snapshot:
        stored = codec.loads(by_id[shot["tool_call_id"]]["projection"])
        assert list(shot) == [
            "tool_call_id",
            "evidence_status",
            "relevance_level",
            "truncated",
            "projection_sha256",
            "evidence",
        ]
        assert shot == {
            "tool_call_id": stored["tool_call_id"],
            "evidence_status": stored["evidence_status"],
            "relevance_level": stored["relevance_level"],
            "truncated": stored["truncated"],
            "projection_sha256": by_id[shot["tool_call_id"]]["projection_sha256"],
            "evidence": stored["evidence"],
        }


def test_verdict_keys_in_order_and_valid_against_the_contract() -> None:
    verdict = check(draft(limitations=[]), record=Record("diagnosis-drafts", 0, 7, 1700000000000, None, b""))
    assert list(verdict) == [
        "event_id",
        "origin",
        "run_id",
        "draft_id",
        "draft_sha256",
        "attempt",
        "verdict",
        "violation_count",
        "violations_truncated",
        "violations",
        "evidence_snapshot",
        "fallback_report",
        "source_timestamp",
    ]
    assert VERDICT_ADAPTER.validate_python(verdict) == verdict
    assert verdict["source_timestamp"] == 1700000000000
    assert verdict["event_id"] == "guard:diagnosis-drafts:0:7:1700000000000"
    assert verdict["origin"] == {
        "topic": "diagnosis-drafts",
        "partition": 0,
        "offset": 7,
        "timestamp": 1700000000000,
    }


def test_violation_events_ids_are_the_verdict_id_plus_the_index() -> None:
    origin = {"topic": "diagnosis-drafts", "partition": 1, "offset": 9, "timestamp": 5}
    verdict = check(
        _many_violations(),
        guard_settings=GuardSettings(max_violations=3),
        record=Record("diagnosis-drafts", 1, 9, 5, None, b""),
    )
    events = violation_events(verdict)
    base = "guard:diagnosis-drafts:1:9:5"
    assert verdict["event_id"] == base
    assert [e["event_id"] for e in events] == [f"{base}#0", f"{base}#1", f"{base}#2"]  # listed ones only
    for event, violation in zip(events, verdict["violations"], strict=True):
        assert event == {
            "event_id": event["event_id"],
            "origin": origin,
            "run_id": RUN,
            "draft_id": "d-1",
            "attempt": 1,
            "code": violation["code"],
            "path": violation["path"],
            "message": violation["message"],
            "source_timestamp": 5,
        }
    offline = violation_events(check(_many_violations()))
    assert [e["event_id"] for e in offline] == [None] * 5
    assert violation_events(check(draft())) == []
